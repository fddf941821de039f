/*
Copyright 2026 The address-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// AdvertiseAddress is the address the API server advertises: the endpoint
// of the `kubernetes` Service, through which Pods reach it. It is no
// address of the host's, and nothing on the host listens on it: the node
// harness (test/node) puts it on each node's loopback and forwards it to
// the API server on the host's, so that the Service's endpoint means the
// same on every node and nowhere else (RFC 2544's range, beside the node
// harness's segments in 198.18.0.0/16).
const AdvertiseAddress = "198.19.0.1"

// The files of the API server's certificates, in its certificate folder:
// kube-apiserver serves apiserver.crt when given that folder alone (as
// envtest does), and envtest generates nothing when it finds it.
const (
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saPublicFile    = "sa.pub"
	saKeyFile       = "sa.key"
)

// certValidity is how long the cluster's certificates are valid: longer
// than any run, short enough that a kept folder's key is soon worthless.
const certValidity = 7 * 24 * time.Hour

// ServingAddresses are the IP addresses the API server's certificate
// names, beside localhost: the loopback it listens on, the first address of
// each Service range (the `kubernetes` Service's ClusterIPs, which Pods'
// in-cluster configuration dials) and AdvertiseAddress.
func ServingAddresses() []netip.Addr {
	return []netip.Addr{
		netip.MustParseAddr("127.0.0.1"),
		firstAddress(netip.MustParsePrefix(ServiceCIDRv4)),
		firstAddress(netip.MustParsePrefix(ServiceCIDRv6)),
		netip.MustParseAddr(AdvertiseAddress),
	}
}

// firstAddress is the first host address of p, which the API server gives
// the `kubernetes` Service.
func firstAddress(p netip.Prefix) netip.Addr { return p.Masked().Addr().Next() }

// writeCertificates makes the API server's certificates in dir, instead of
// envtest's (whose serving certificate names the loopback alone): a CA of
// the cluster's own, a serving certificate it signs for localhost and
// ServingAddresses, and the ServiceAccount token signing key. It returns
// the CA's certificate, which clients trust the server by.
func writeCertificates(dir string) (caPEM []byte, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "address-controller test cluster CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("the cluster's CA: %w", err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	for _, a := range ServingAddresses() {
		serving.IPAddresses = append(serving.IPAddresses, net.IP(a.AsSlice()))
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, serving, ca, key.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("the API server's certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPublic, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}

	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		servingCertFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER}),
		saPublicFile:    pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPublic}),
	}
	for name, k := range map[string]crypto.Signer{servingKeyFile: key, saKeyFile: saKey} {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		files[name] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	return caPEM, nil
}

// serial is a random certificate serial number.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
