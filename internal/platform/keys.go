package platform

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// MasterKey seals tenants' private keys and derives per-tenant secrets.
type MasterKey [32]byte

// LoadMasterKey decodes a base64 key, or, when encoded is empty, reads the
// key file in dataDir, generating it on first use.
func LoadMasterKey(encoded, dataDir string) (MasterKey, error) {
	var k MasterKey
	if encoded == "" {
		path := filepath.Join(dataDir, "master.key")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			if _, err := rand.Read(k[:]); err != nil {
				return k, err
			}
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return k, err
			}
			enc := base64.StdEncoding.EncodeToString(k[:])
			// O_EXCL: when two processes start at once, one key wins and the
			// loser reads it back.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil {
				_, err = f.WriteString(enc + "\n")
				f.Close()
				return k, err
			}
			if !errors.Is(err, os.ErrExist) {
				return k, fmt.Errorf("platform: write master key: %w", err)
			}
			b, err = os.ReadFile(path)
			if err != nil {
				return k, err
			}
		} else if err != nil {
			return k, fmt.Errorf("platform: read master key: %w", err)
		}
		encoded = string(b)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil || len(raw) != len(k) {
		return k, errors.New("platform: the master key must be 32 bytes in base64")
	}
	copy(k[:], raw)
	return k, nil
}

// Derive returns a secret for one purpose, so no two uses share a key.
func (k MasterKey) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, k[:])
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// seal encrypts plaintext with AES-256-GCM under the master key.
func (k MasterKey) seal(plaintext []byte) (string, error) {
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return "", err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, plaintext, nil)), nil
}

func (k MasterKey) open(sealed string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if len(raw) < gcm.NonceSize() {
		return nil, errors.New("platform: sealed key too short")
	}
	return gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], nil)
}

// KeyPair is a tenant's RS256 signing key.
type KeyPair struct {
	ID      string
	Private *rsa.PrivateKey
	Public  *rsa.PublicKey
}

// newKeyPair returns the key priv with its PEM public key and sealed
// private key, as stored in the registry.
func newKeyPair(mk MasterKey, priv *rsa.PrivateKey) (kp KeyPair, publicPEM, sealed string, err error) {
	id, pubDER, err := keyID(priv)
	if err != nil {
		return kp, "", "", err
	}
	kp = KeyPair{ID: id, Private: priv, Public: &priv.PublicKey}
	publicPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	sealed, err = mk.seal(x509.MarshalPKCS1PrivateKey(priv))
	return kp, publicPEM, sealed, err
}

// openKeyPair unseals a stored private key.
func openKeyPair(mk MasterKey, id, sealed string) (KeyPair, error) {
	der, err := mk.open(sealed)
	if err != nil {
		return KeyPair{}, fmt.Errorf("platform: unseal key %s (wrong master key?): %w", id, err)
	}
	priv, err := x509.ParsePKCS1PrivateKey(der)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{ID: id, Private: priv, Public: &priv.PublicKey}, nil
}

// ParsePublicKey reads a PEM public key, as other parts verify tokens with.
func ParsePublicKey(publicPEM string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(publicPEM))
	if block == nil {
		return nil, errors.New("platform: no PEM block")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("platform: not an RSA key")
	}
	return pub, nil
}

// keyID names a key after its public key, which it returns in DER.
func keyID(priv *rsa.PrivateKey) (string, []byte, error) {
	pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(pubDER)
	return base64.RawURLEncoding.EncodeToString(sum[:12]), pubDER, nil
}

// generateKey makes a tenant's key.
func generateKey() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }

// sharedKeys are the keys of registries made WithSharedKeys, generated as
// they are first needed and kept for the process's life.
var sharedKeys struct {
	mu   sync.Mutex
	keys []*rsa.PrivateKey
	ids  []string
}

// sharedKey is the first shared key that none of the taken key IDs names.
func sharedKey(taken map[string]bool) (*rsa.PrivateKey, error) {
	sharedKeys.mu.Lock()
	defer sharedKeys.mu.Unlock()
	for i, id := range sharedKeys.ids {
		if !taken[id] {
			return sharedKeys.keys[i], nil
		}
	}
	priv, err := generateKey()
	if err != nil {
		return nil, err
	}
	id, _, err := keyID(priv)
	if err != nil {
		return nil, err
	}
	sharedKeys.keys, sharedKeys.ids = append(sharedKeys.keys, priv), append(sharedKeys.ids, id)
	return priv, nil
}
