#ifndef KEYGATE_CSODIUM_SHIM_H
#define KEYGATE_CSODIUM_SHIM_H

// libsodium (Debian: libsodium-dev).
#include <sodium.h>

#endif
