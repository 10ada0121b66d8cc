#ifndef KEYGATE_CNETTLE_SHIM_H
#define KEYGATE_CNETTLE_SHIM_H

// Nettle's SHA-256 (Debian: nettle-dev), for the audit trail's hash chain.
#include <nettle/sha2.h>

#endif
