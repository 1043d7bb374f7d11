package nats

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/artifactforge/forge/internal/redact"
)

// Secret is a credential (a password or a token). Every way of printing it — fmt's verbs, JSON,
// slog — shows "REDACTED", so a Config can be logged whole; Reveal is the only way to read it.
type Secret string

// Redacted is what a non-empty Secret prints as.
const Redacted = redact.Redacted

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString is used by %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON never writes the secret.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// MarshalText never writes the secret (encoding/xml, yaml and others use it).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue keeps slog from writing the secret.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Reveal returns the secret itself, to hand to the NATS client.
func (s Secret) Reveal() string { return string(s) }

// Config says how to reach a fleet store: the servers, the bucket prefix and the credentials.
// Parse it from a store URL with ParseURL.
type Config struct {
	Servers []string // nats://HOST:PORT (or tls://HOST:PORT) each
	Name    string   // bucket prefix: the buckets are NAME_data, NAME_metrics and NAME_leases

	User     string
	Password Secret
	Token    Secret
	Creds    string // path of a .creds file (JWT + NKey seed)
	NKeySeed string // path of an NKey seed file

	TLS     bool   // require TLS (tls:// or any TLS file given)
	TLSCA   string // path of a CA bundle that signs the servers' certificates
	TLSCert string // path of the client certificate (mutual TLS)
	TLSKey  string // path of the client key

	Replicas int // replicas of each bucket when this process creates it (1 or 3; 0 = 1)
}

// DefaultName is the bucket prefix when a store URL names none.
const DefaultName = "forge"

// EnvPrefixes: credentials not in the URL come from the environment variables the nats CLI reads
// (NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CREDS, NATS_NKEY, NATS_CA, NATS_CERT, NATS_KEY).

// ParseURL parses a fleet store URL:
//
//	nats://[USER:PASSWORD@ | TOKEN@]HOST:PORT[,HOST:PORT...]/NAME[?creds=FILE&nkey=FILE&ca=FILE&cert=FILE&key=FILE&replicas=N]
//
// tls:// instead of nats:// requires TLS. NAME (default "forge") prefixes the bucket names. getenv
// (os.Getenv if nil) supplies the credentials the URL leaves out, from the nats CLI's variables.
// Error messages never contain a password or token.
func ParseURL(raw string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{}
	scheme, rest, ok := strings.Cut(raw, "://")
	switch {
	case !ok:
		return nil, fmt.Errorf("nats: store URL %q: no scheme; write nats://HOST:PORT/NAME", redactURL(raw))
	case scheme == "nats":
	case scheme == "tls":
		c.TLS = true
	default:
		return nil, fmt.Errorf("nats: store URL %q: scheme %q is not nats:// or tls://", redactURL(raw), scheme)
	}
	pre, query, _ := strings.Cut(rest, "?")
	if at := strings.LastIndex(pre, "@"); at >= 0 {
		userinfo := pre[:at]
		pre = pre[at+1:]
		if u, p, hasPass := strings.Cut(userinfo, ":"); hasPass {
			c.User, c.Password = unescape(u), Secret(unescape(p))
		} else {
			c.Token = Secret(unescape(userinfo))
		}
	}
	authority, path, _ := strings.Cut(pre, "/")
	if authority == "" {
		return nil, fmt.Errorf("nats: store URL %q names no server; write nats://HOST:PORT/NAME", redactURL(raw))
	}
	for _, hp := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			host, port = hp, "4222"
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 || host == "" {
			return nil, fmt.Errorf("nats: store URL %q: server %q is not HOST:PORT", redactURL(raw), hp)
		}
		s := "nats"
		if c.TLS {
			s = "tls"
		}
		c.Servers = append(c.Servers, s+"://"+net.JoinHostPort(host, port))
	}
	c.Name = strings.Trim(path, "/")
	if c.Name == "" {
		c.Name = DefaultName
	}
	if !validBucketPrefix(c.Name) {
		return nil, fmt.Errorf("nats: store URL %q: name %q: use letters, digits, - and _ (at most 64), e.g. nats://localhost:4222/forge", redactURL(raw), c.Name)
	}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			v = unescape(v)
			switch k {
			case "creds":
				c.Creds = v
			case "nkey":
				c.NKeySeed = v
			case "ca":
				c.TLSCA = v
			case "cert":
				c.TLSCert = v
			case "key":
				c.TLSKey = v
			case "replicas":
				n, err := strconv.Atoi(v)
				if err != nil || (n != 1 && n != 3 && n != 5) {
					return nil, fmt.Errorf("nats: store URL %q: replicas=%q: use 1, 3 or 5", redactURL(raw), v)
				}
				c.Replicas = n
			default:
				return nil, fmt.Errorf("nats: store URL %q: unknown option %q (known: creds, nkey, ca, cert, key, replicas)", redactURL(raw), k)
			}
		}
	}
	fill := func(dst *string, env string) {
		if *dst == "" {
			*dst = getenv(env)
		}
	}
	fillSecret := func(dst *Secret, env string) {
		if *dst == "" {
			*dst = Secret(getenv(env))
		}
	}
	if c.Token == "" && c.Password == "" {
		fill(&c.User, "NATS_USER")
		fillSecret(&c.Password, "NATS_PASSWORD")
		if c.User == "" {
			fillSecret(&c.Token, "NATS_TOKEN")
		}
	}
	fill(&c.Creds, "NATS_CREDS")
	fill(&c.NKeySeed, "NATS_NKEY")
	fill(&c.TLSCA, "NATS_CA")
	fill(&c.TLSCert, "NATS_CERT")
	fill(&c.TLSKey, "NATS_KEY")
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, errors.New("nats: a TLS client certificate needs both cert and key (cert=FILE&key=FILE or $NATS_CERT and $NATS_KEY)")
	}
	if c.TLSCA != "" || c.TLSCert != "" {
		c.TLS = true
		for i, s := range c.Servers {
			c.Servers[i] = "tls://" + strings.TrimPrefix(strings.TrimPrefix(s, "nats://"), "tls://")
		}
	}
	return c, nil
}

// String is the URL without its credentials: "nats://h:4222/NAME (user alice, password REDACTED)".
func (c *Config) String() string {
	var b strings.Builder
	for i, s := range c.Servers {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	b.WriteString("/" + c.Name)
	var auth []string
	if c.User != "" {
		auth = append(auth, "user "+c.User)
	}
	if c.Password != "" {
		auth = append(auth, "password "+c.Password.String())
	}
	if c.Token != "" {
		auth = append(auth, "token "+c.Token.String())
	}
	if c.Creds != "" {
		auth = append(auth, "creds "+c.Creds)
	}
	if c.NKeySeed != "" {
		auth = append(auth, "nkey "+c.NKeySeed)
	}
	if c.TLS {
		auth = append(auth, "tls")
	}
	if len(auth) > 0 {
		b.WriteString(" (" + strings.Join(auth, ", ") + ")")
	}
	return b.String()
}

// GoString is used by %#v: the same redacted form.
func (c *Config) GoString() string { return "nats.Config(" + c.String() + ")" }

// LogValue keeps slog to the redacted form.
func (c *Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Options are the nats.go connection options for c: credentials, TLS, a client name and
// reconnection without end (a fleet process outlives a server restart).
func (c *Config) Options(clientName string) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name(clientName),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second),
	}
	if c.User != "" || c.Password != "" {
		opts = append(opts, nats.UserInfo(c.User, c.Password.Reveal()))
	}
	if c.Token != "" {
		opts = append(opts, nats.Token(c.Token.Reveal()))
	}
	if c.Creds != "" {
		if _, err := os.Stat(c.Creds); err != nil {
			return nil, fmt.Errorf("nats: credentials file: %w (check creds= or $NATS_CREDS)", err)
		}
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKeySeed != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKeySeed)
		if err != nil {
			return nil, fmt.Errorf("nats: nkey seed file %s: %w (check nkey= or $NATS_NKEY)", c.NKeySeed, err)
		}
		opts = append(opts, o)
	}
	if c.TLS {
		opts = append(opts, nats.Secure())
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	return opts, nil
}

// Connect connects to c's servers. The error names the servers, never the credentials.
func (c *Config) Connect(clientName string, extra ...nats.Option) (*nats.Conn, error) {
	opts, err := c.Options(clientName)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(strings.Join(c.Servers, ","), append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("nats: connect to %s: %w (%s)", c.String(), err, c.connectAdvice(err))
	}
	return nc, nil
}

// connectAdvice is what to check when connecting with c failed with err: TLS that one side
// requires and the other does not offer, an untrusted server certificate, else the server and
// the credentials.
func (c *Config) connectAdvice(err error) string {
	servers := strings.Join(c.Servers, ",")
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.Is(err, nats.ErrSecureConnWanted):
		return "the server at " + servers + " does not offer TLS, which this URL requires (tls://, or ca=, cert= and key= or $NATS_CA, $NATS_CERT, $NATS_KEY): " +
			"enable TLS on the server, or write nats:// without TLS files if it is meant to be plaintext"
	case errors.Is(err, nats.ErrSecureConnRequired):
		return "the server at " + servers + " requires TLS: write tls://HOST:PORT/NAME, with ca=FILE if its certificate is not signed by a CA this machine trusts"
	case errors.As(err, &unknownCA) || (errors.As(err, &verify) && errors.As(verify.Err, &unknownCA)):
		return "the server's TLS certificate is not signed by a CA this machine trusts: pass the CA's certificate with ca=FILE (or $NATS_CA)"
	case errors.As(err, &hostname):
		return "the server's TLS certificate does not name the host in the URL: connect by a name it holds (" + hostname.Certificate.Subject.CommonName + ", or its alternative names)"
	case errors.As(err, &verify):
		return "the server's TLS certificate was refused: check it (expiry, names) and ca=FILE"
	case strings.Contains(err.Error(), "tls: certificate required") || strings.Contains(err.Error(), "tls: bad certificate"):
		// The server's TLS alert (crypto/tls does not export its type for TCP connections).
		return "the server requires a client certificate it trusts: pass cert=FILE&key=FILE (or $NATS_CERT and $NATS_KEY)"
	case c.TLSCert == "" && strings.Contains(err.Error(), "after TLS handshake"):
		// TLS 1.3: the server checks the client's certificate after the client's handshake is
		// done, and its alert may be lost to a write on the closed connection (broken pipe).
		return "the server closed the connection after the TLS handshake: it may require a client certificate (pass cert=FILE&key=FILE, or $NATS_CERT and $NATS_KEY); else check that nats-server runs at " + servers + " and the credentials"
	}
	return "is nats-server running at " + servers + "? are the credentials right?"
}

func validBucketPrefix(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// unescape decodes %XX escapes (a password may contain @, : or /); a malformed escape is kept as is.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// redactURL is redact.URL: one redaction for every message that names a store URL.
func redactURL(raw string) string { return redact.URL(raw) }
