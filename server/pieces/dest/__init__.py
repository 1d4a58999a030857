"""Per-operator code pieces, each exactly as torchgen 2.13 writes it."""
