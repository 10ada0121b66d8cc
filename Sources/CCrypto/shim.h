#ifndef KEYGATE_CCRYPTO_SHIM_H
#define KEYGATE_CCRYPTO_SHIM_H

// OpenSSL's libcrypto (Debian: libssl-dev): P-256 keys, ECDSA, ECDH and AES-GCM, and the check of
// an SSH server's RSA or ECDSA host key signature, through the EVP interface only (none of its
// deprecated low-level calls).
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/bn.h>

/// EVP_PKEY_KEYPAIR, a macro Swift cannot import: the selection of a whole key pair.
static const int keygate_evp_pkey_keypair = EVP_PKEY_KEYPAIR;

/// Parameter names with static storage: an OSSL_PARAM_BLD keeps the name's pointer in the
/// parameters it builds (a string Swift passes lives only for the call).
static const char *const keygate_param_group = OSSL_PKEY_PARAM_GROUP_NAME;
static const char *const keygate_param_private_key = OSSL_PKEY_PARAM_PRIV_KEY;
static const char *const keygate_param_public_key = OSSL_PKEY_PARAM_PUB_KEY;

#endif
