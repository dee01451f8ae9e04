package main

// The Mozilla CA roots, embedded: used only when the system has none (a
// minimal image without /etc/ssl), so that HTTPS models work anyway.
// SSL_CERT_FILE and SSL_CERT_DIR still take precedence when set.
import _ "golang.org/x/crypto/x509roots/fallback"
