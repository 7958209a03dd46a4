"""Sources: read data/ (CSV, YAML) into typed, validated records. All file I/O of the model
lives here; nothing below this layer opens a file."""
