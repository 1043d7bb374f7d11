package nats

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// writeCert writes a certificate (signed by parent, or self-signed if parent is nil) and its key
// as PEM files in dir.
func writeCert(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key, certFile, keyFile
}

// TestMutualTLS: ca=, cert= and key= reach the client; a server that requires client
// certificates accepts it, and refuses a client without one.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	ca, caKey, caFile, _ := writeCert(t, dir, "ca", &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "forge test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
	_, _, srvCert, srvKey := writeCert(t, dir, "server", &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)
	_, _, cliCert, cliKey := writeCert(t, dir, "client", &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "forge"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey)

	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srvCert, KeyFile: srvKey, CaFile: caFile, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 2}
	srv, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	host := srv.Addr().String()

	cfg, err := ParseURL("nats://"+host+"/tls?ca="+caFile+"&cert="+cliCert+"&key="+cliKey, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.TLS || !strings.HasPrefix(cfg.Servers[0], "tls://") {
		t.Fatalf("TLS files given but TLS not required: %s", cfg)
	}
	s, err := Open(testCtx(t), cfg, "forge-tls-test")
	if err != nil {
		t.Fatalf("mutual TLS: %v", err)
	}
	if _, err := s.Knowledge.Put(testCtx(t), "knowledge.x", []byte("over TLS")); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Knowledge.Get(testCtx(t), "knowledge.x"); err != nil || string(e.Value) != "over TLS" {
		t.Fatalf("round trip over TLS: %q %v", e.Value, err)
	}
	s.Close()

	// Without a client certificate the server refuses.
	noCert, err := ParseURL("tls://"+host+"/tls?ca="+caFile, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := noCert.Connect("forge-tls-test")
	t.Logf("without a client certificate: %v", err)
	if err == nil {
		// The refusal may come just after the handshake: a request then fails.
		_, rerr := nc.Request("$JS.API.INFO", nil, time.Second)
		nc.Close()
		if rerr == nil {
			t.Fatal("a client without a certificate was served")
		}
	}
}
