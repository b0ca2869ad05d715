#ifndef FLATCACHE_COPENSSL_SHIM_H
#define FLATCACHE_COPENSSL_SHIM_H
// The EVP digest and cipher interfaces (the low-level SHA256_* calls are deprecated in
// OpenSSL 3), one-shot HMAC, RAND_bytes for nonces, and crypto.h for OPENSSL_init_crypto.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
