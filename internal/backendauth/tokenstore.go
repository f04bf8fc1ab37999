package backendauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
)

// A TokenStore keeps the tokens `isogate login` obtained for a backend,
// where every replica of the gateway reads them and any of them stores a
// refreshed one. The zero [Options].Tokens is the token file
// ([Authorizer.TokenFile], mode 0600).
type TokenStore interface {
	// Load returns the backend's stored login (ErrNoLogin when none).
	Load(ctx context.Context, backend string) ([]byte, error)
	// Save replaces it.
	Save(ctx context.Context, backend string, login []byte) error
	// Where names the store in messages.
	Where(backend string) string
}

// ErrNoLogin is a TokenStore's Load of a backend nobody logged in to.
var ErrNoLogin = errors.New("no stored login")

// RedisTokenKeyPrefix starts the Redis keys of stored logins.
const RedisTokenKeyPrefix = "isogate:oauth:"

// RedisTokens keeps logins in Redis, encrypted with AES-256-GCM under a
// key derived from a configured secret (store.token_key): whoever reaches
// Redis without the secret reads nothing and can plant nothing (an entry
// that does not decrypt under the key, or that was moved to another
// backend's key, is refused).
type RedisTokens struct {
	client resultstore.StoreClient
	aead   cipher.AEAD
}

// redisRetries is how many times a command to Redis is retried (go-redis's
// default).
const redisRetries = 3

// NewRedisTokens connects to url (a redis:// or rediss:// URL) and
// encrypts under secret, which must not be empty.
func NewRedisTokens(url, secret string) (*RedisTokens, error) {
	return newRedisTokens(nil, url, secret)
}

// NewRedisTokensShared keeps logins through client, the replica's one
// client of store.redis_url shared by all its stores: Close leaves it
// open (see [resultstore.StoreClient]). secret is as for [NewRedisTokens].
func NewRedisTokensShared(client *redis.Client, secret string) (*RedisTokens, error) {
	return newRedisTokens(client, "", secret)
}

func newRedisTokens(shared *redis.Client, url, secret string) (*RedisTokens, error) {
	if secret == "" {
		return nil, errors.New("storing logins in Redis needs store.token_key")
	}
	key := sha256.Sum256([]byte("isogate oauth tokens\x00" + secret))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	client, err := resultstore.ClientFor(shared, url, redisRetries)
	if err != nil {
		return nil, err
	}
	return &RedisTokens{client: client, aead: aead}, nil
}

// Close closes the Redis connection, unless the client is shared.
func (r *RedisTokens) Close() error { return r.client.Close() }

func (r *RedisTokens) key(backend string) string { return RedisTokenKeyPrefix + backend }

// Where implements TokenStore.
func (r *RedisTokens) Where(backend string) string {
	return "Redis (" + r.key(backend) + ", encrypted)"
}

// Load implements TokenStore.
func (r *RedisTokens) Load(ctx context.Context, backend string) ([]byte, error) {
	sealed, err := r.client.Get(ctx, r.key(backend)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoLogin
	}
	if err != nil {
		return nil, fmt.Errorf("reading the login from Redis: %w", err)
	}
	n := r.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("the login stored in Redis is not isogate's (too short): run `isogate login` again")
	}
	plain, err := r.aead.Open(nil, sealed[:n], sealed[n:], []byte(r.key(backend)))
	if err != nil {
		return nil, errors.New("the login stored in Redis does not decrypt under store.token_key (planted, moved or another key): run `isogate login` again")
	}
	return plain, nil
}

// Save implements TokenStore.
func (r *RedisTokens) Save(ctx context.Context, backend string, login []byte) error {
	nonce := make([]byte, r.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := r.aead.Seal(nonce, nonce, login, []byte(r.key(backend)))
	if err := r.client.Set(ctx, r.key(backend), sealed, 0).Err(); err != nil {
		return fmt.Errorf("storing the login in Redis: %w", err)
	}
	return nil
}
