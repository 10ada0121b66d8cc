#ifndef KEYGATE_CCRYPTO_SHIM_H
#define KEYGATE_CCRYPTO_SHIM_H

// OpenSSL's libcrypto (Debian: libssl-dev): P-256 keys, ECDSA, ECDH and AES-GCM through the
// EVP interface only (none of its deprecated low-level calls).
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>

#endif
