"""The composition root: configuration, the command line, and the HTTP server."""
