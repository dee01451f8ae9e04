package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentcore/agentcore/sdk/client"
)

// defaultAddr is agent-server's default -listen.
const defaultAddr = "127.0.0.1:50051"

// connFlags are the connection settings. A flag wins over its variable;
// the names are those agent-server and the docs use where they exist
// (AGENTCORE_ADDR for a client's address, AGENTCORE_AUTH_TOKEN and
// AGENTCORE_AUTH_TOKEN_FILE for the token). The client's TLS files have
// names of their own: agent-server's AGENTCORE_TLS_CERT is its own
// certificate, which a client run beside it must not send as its.
type connFlags struct {
	addr, tokenFile           string
	tls                       bool
	ca, cert, key, serverName string
}

// The variables, by what they set.
const (
	envAddr       = "AGENTCORE_ADDR"
	envToken      = "AGENTCORE_AUTH_TOKEN"
	envTokenFile  = "AGENTCORE_AUTH_TOKEN_FILE"
	envTLS        = "AGENTCORE_TLS"
	envCA         = "AGENTCORE_TLS_CA"
	envCert       = "AGENTCORE_TLS_CLIENT_CERT"
	envKey        = "AGENTCORE_TLS_CLIENT_KEY"
	envServerName = "AGENTCORE_TLS_SERVER_NAME"
)

// register adds the connection flags to fs, with the values set so far as
// their defaults, so that they count before the command and after it.
// There is no flag for the token itself: a command line is visible to
// every user of the machine (ps, /proc), a file or a variable is not.
func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", c.addr, "agent-server's address: host:port or unix:PATH (`ADDR`; "+envAddr+", default "+defaultAddr+")")
	fs.StringVar(&c.tokenFile, "token-file", c.tokenFile, "`FILE` holding the bearer token ("+envTokenFile+"; or the token in "+envToken+")")
	fs.BoolVar(&c.tls, "tls", c.tls, "connect with TLS, verifying the server against the system's CA roots ("+envTLS+")")
	fs.StringVar(&c.ca, "tls-ca", c.ca, "PEM `FILE` of the CA that signed the server's certificate; implies --tls ("+envCA+")")
	fs.StringVar(&c.cert, "tls-cert", c.cert, "PEM `FILE` of a client certificate, for mutual TLS; implies --tls ("+envCert+")")
	fs.StringVar(&c.key, "tls-key", c.key, "PEM `FILE` of the client certificate's key ("+envKey+")")
	fs.StringVar(&c.serverName, "tls-server-name", c.serverName, "`NAME` to verify the server's certificate against; implies --tls ("+envServerName+")")
}

// resolved returns the settings with the variables filling what no flag set.
func (c connFlags) resolved(getenv func(string) string) connFlags {
	fill := func(v *string, name string) {
		if *v == "" {
			*v = getenv(name)
		}
	}
	fill(&c.addr, envAddr)
	fill(&c.tokenFile, envTokenFile)
	fill(&c.ca, envCA)
	fill(&c.cert, envCert)
	fill(&c.key, envKey)
	fill(&c.serverName, envServerName)
	if c.addr == "" {
		c.addr = defaultAddr
	}
	if !c.tls {
		c.tls, _ = strconv.ParseBool(getenv(envTLS))
	}
	c.tls = c.tls || c.ca != "" || c.cert != "" || c.serverName != ""
	return c
}

// errConfig marks a connection setting that cannot be used (a file that
// cannot be read, a certificate without its key…): exit code 2.
var errConfig = errors.New("configuration")

// dial connects to the server as the settings say.
func (c connFlags) dial(getenv func(string) string) (*client.Client, error) {
	r := c.resolved(getenv)
	var opts []client.Option
	token := getenv(envToken)
	if r.tokenFile != "" {
		b, err := os.ReadFile(r.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("%w: the token file: %w", errConfig, err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return nil, fmt.Errorf("%w: the token file %s is empty", errConfig, r.tokenFile)
		}
	}
	if token != "" {
		opts = append(opts, client.WithToken(token))
	}
	if r.tls {
		cfg, err := r.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithTLS(cfg))
	}
	cl, err := client.Dial(r.addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errConfig, err)
	}
	return cl, nil
}

// tlsConfig builds the client's TLS configuration.
func (c connFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.serverName}
	if c.ca != "" {
		pem, err := os.ReadFile(c.ca)
		if err != nil {
			return nil, fmt.Errorf("%w: the CA file: %w", errConfig, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: the CA file %s holds no PEM certificate", errConfig, c.ca)
		}
	}
	if (c.cert == "") != (c.key == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both --tls-cert and --tls-key", errConfig)
	}
	if c.cert != "" {
		pair, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, fmt.Errorf("%w: the client certificate: %w", errConfig, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
