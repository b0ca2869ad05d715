#ifndef FLATCACHE_COPENSSL_SHIM_H
#define FLATCACHE_COPENSSL_SHIM_H
// Only the EVP digest interface (the low-level SHA256_* calls are deprecated in OpenSSL 3),
// and crypto.h for OPENSSL_init_crypto.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif
