;;; emacs_e2e.el --- run by tests/editors/test_emacs.py: emacs --batch -Q -l <docs' config> -l this  -*- lexical-binding: t -*-
;; In the workspace folder. Writes what it saw as JSON to $OUT.
(require 'json)
(require 'cl-lib)

(defvar opgen-test-result (list (cons 'errors nil)))

(defun opgen-test-put (key value)
  (setf (alist-get key opgen-test-result) value))

(defun opgen-test-wait (what predicate seconds)
  "Run timers and process output until PREDICATE holds, or fail with WHAT."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall predicate) (error "timed out: %s" what))))

(defun opgen-test-open (file)
  (find-file file)
  ;; eglot-ensure connects from post-command-hook: there is no command loop in batch mode.
  (run-hooks 'post-command-hook)
  (opgen-test-wait (format "eglot connects for %s" file) (lambda () (eglot-current-server)) 60)
  (opgen-test-wait (format "eglot manages %s" file) (lambda () (bound-and-true-p flymake-mode)) 30)
  ;; Flymake defers its first check to the command loop, which batch mode lacks: start it.
  (flymake-start)
  (current-buffer))

(defun opgen-test-diagnostics (buffer)
  (with-current-buffer buffer
    (mapcar (lambda (d)
              (list (cons 'file (file-name-nondirectory (buffer-file-name buffer)))
                    (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                    (cons 'type (format "%s" (flymake-diagnostic-type d)))
                    (cons 'text (flymake-diagnostic-text d))))
            (flymake-diagnostics))))

(condition-case err
    (progn
      (opgen-test-put 'emacs emacs-version)
      (let* ((native (opgen-test-open "native_functions.yaml"))
             (server (eglot-current-server)))
        (opgen-test-put 'mode (format "%s" major-mode))
        (opgen-test-put 'server (format "%s" (plist-get (eglot--server-info server) :name)))
        (opgen-test-wait "11 diagnostics in native_functions.yaml"
                         (lambda () (>= (length (opgen-test-diagnostics native)) 11)) 60)
        (let ((tags (opgen-test-open "tags.yaml")))
          (opgen-test-wait "the diagnostic of tags.yaml" (lambda () (opgen-test-diagnostics tags)) 60)
          (accept-process-output nil 0.5)
          (opgen-test-put 'diagnostics (vconcat (opgen-test-diagnostics native) (opgen-test-diagnostics tags))))
        ;; Hover: eglot's ElDoc function, as M-x eldoc calls it.
        (switch-to-buffer native)
        (goto-char (point-min))
        (forward-line (1- (string-to-number (getenv "HOVER_LINE"))))
        (forward-char (1- (string-to-number (getenv "HOVER_COLUMN"))))
        (let (hover)
          (eglot-hover-eldoc-function (lambda (info &rest _) (setq hover (or info ""))))
          (opgen-test-wait "the hover" (lambda () hover) 30)
          (opgen-test-put 'hover (substring-no-properties hover))
          ;; What eglot announced as the hover's contentFormat: Markdown only with markdown-mode.
          (opgen-test-put 'markdown_mode (if (fboundp 'gfm-view-mode) t :json-false)))
        ;; opgen-generate (docs/editors.md) on the copy without mistakes.
        (let ((clean (opgen-test-open "clean/native_functions.yaml")))
          (with-current-buffer clean
            (let ((result (opgen-generate)))
              (opgen-test-put 'generate_reply (format "%S" result))
              (opgen-test-put 'generate (plist-get result :summary))
              (opgen-test-put 'output_dir (plist-get result :outputDir)))))))
  (error (opgen-test-put 'errors (list (error-message-string err)))))

(with-temp-file (getenv "OUT")
  (insert (json-encode opgen-test-result)))
(kill-emacs 0)
