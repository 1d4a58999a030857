#pragma once
// Sample template: at::<key>:: calls a ${dispatch_key} kernel directly, without the dispatcher.
${inline_headers}
