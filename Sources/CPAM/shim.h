#ifndef KEYGATE_CPAM_SHIM_H
#define KEYGATE_CPAM_SHIM_H

// Linux-PAM's application interface (Debian: libpam0g-dev).
#include <security/pam_appl.h>
#include <stddef.h>

// The PAM_FAIL_DELAY item is a function pointer passed as `const void *`; Swift cannot
// convert a @convention(c) function to a raw pointer portably, so this helper does it.
typedef void (*keygate_pam_delay_fn)(int retval, unsigned usec_delay, void *appdata_ptr);

static inline const void *keygate_pam_delay_item(keygate_pam_delay_fn fn) {
    return (const void *)fn;
}

#endif
