package device

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
)

// A device code is the only thing that opens the token approved for it.
// Its hash finds the request; a X25519 key pair derived from it (with
// another label) seals the approved token's secret from the moment of
// approval to the poll that collects it, so the database alone, or a
// backup of it, never holds a usable secret.

const (
	codePrefix = "lms_dc_"
	codeBytes  = 32
)

// newDeviceCode returns a fresh device code.
func newDeviceCode() string {
	b := make([]byte, codeBytes)
	rand.Read(b)
	return codePrefix + base64.RawURLEncoding.EncodeToString(b)
}

func derive(label, code string) []byte {
	sum := sha256.Sum256([]byte(label + "\x00" + code))
	return sum[:]
}

// codeHash is what the database keeps of a device code.
func codeHash(code string) string { return hex.EncodeToString(derive("lms device code", code)) }

func sealPrivate(code string) *ecdh.PrivateKey {
	// Any 32 bytes are an X25519 private key.
	k, _ := ecdh.X25519().NewPrivateKey(derive("lms device seal", code))
	return k
}

// sealKey is the public half kept beside the request.
func sealKey(code string) string {
	return base64.RawURLEncoding.EncodeToString(sealPrivate(code).PublicKey().Bytes())
}

func aeadFor(shared, ephemeral, recipient []byte) (cipher.AEAD, error) {
	h := sha256.New()
	h.Write(shared)
	h.Write(ephemeral)
	h.Write(recipient)
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts secret to the request's public key: ephemeral public key,
// nonce and ciphertext, base64.
func seal(publicKey, secret string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(publicKey)
	if err != nil {
		return "", err
	}
	recipient, err := ecdh.X25519().NewPublicKey(raw)
	if err != nil {
		return "", err
	}
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	shared, err := eph.ECDH(recipient)
	if err != nil {
		return "", err
	}
	aead, err := aeadFor(shared, eph.PublicKey().Bytes(), raw)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	out := append(eph.PublicKey().Bytes(), nonce...)
	out = aead.Seal(out, nonce, []byte(secret), nil)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// open decrypts what seal made for the device code.
func open(code, sealed string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return "", err
	}
	priv := sealPrivate(code)
	if len(raw) < 32 {
		return "", errors.New("device: sealed token too short")
	}
	eph, err := ecdh.X25519().NewPublicKey(raw[:32])
	if err != nil {
		return "", err
	}
	shared, err := priv.ECDH(eph)
	if err != nil {
		return "", err
	}
	aead, err := aeadFor(shared, raw[:32], priv.PublicKey().Bytes())
	if err != nil {
		return "", err
	}
	rest := raw[32:]
	if len(rest) < aead.NonceSize() {
		return "", errors.New("device: sealed token too short")
	}
	plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], nil)
	return string(plain), err
}
