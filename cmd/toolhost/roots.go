package main

// The Mozilla CA roots, embedded: used only when the system has none (a
// minimal image without /etc/ssl), so that HTTPS MCP servers work anyway.
import _ "golang.org/x/crypto/x509roots/fallback"
