#ifndef KEYGATE_CSYSTEMD_SHIM_H
#define KEYGATE_CSYSTEMD_SHIM_H

// libsystemd's sd-bus (Debian: libsystemd-dev). Swift cannot call sd-bus's variadic helpers, so the
// one question Keygate asks logind is asked here, with its own deadline: sd-bus's method-call timeout
// does not cover a bus that accepts the connection and never finishes the handshake.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include "bus.h"

/// The answer of `keygate_logind_locked_hint`, filled in by it.
typedef struct {
    /// 1 when the session's LockedHint is true, 0 when false (valid only when the call returns 0).
    int locked;
    /// The D-Bus error name of an error reply, or empty.
    char error_name[128];
} keygate_logind_answer;

/// Asks logind for the `LockedHint` of the session `session_id`: reads the property on
/// `/org/freedesktop/login1/session/<escaped id>` (`org.freedesktop.login1.Session`) through sd-bus
/// (a plain `unix:path=` bus is asked on the wire by KeygateLinux, without libsystemd).
///
/// `address` is the bus address (the system bus is `unix:path=/run/dbus/system_bus_socket`, what
/// `sd_bus_open_system` uses when `DBUS_SYSTEM_BUS_ADDRESS` is unset). Everything — connecting, authenticating, the call — ends within
/// `timeout_usec`; past it the result is `-ETIMEDOUT`.
///
/// Returns 0 with `answer->locked` set; a negative errno when the bus cannot be opened (`-ENOENT`:
/// there is no bus socket; `-ELIBACC`: libsystemd cannot be opened), or when the call fails
/// (`answer->error_name` then names a D-Bus error reply, if there was one).
static inline int keygate_logind_locked_hint(
    const char *address, const char *session_id, uint64_t timeout_usec, keygate_logind_answer *answer) {
    answer->locked = 0;
    answer->error_name[0] = '\0';
    uint64_t deadline = keygate_bus_now_usec() + timeout_usec;
    sd_bus *bus = NULL;
    int r = keygate_bus_open(address, timeout_usec, &bus);
    if (r < 0) return r;

    char *path = NULL;
    sd_bus_message *call = NULL, *reply = NULL;
    r = sd_bus_path_encode("/org/freedesktop/login1/session", session_id, &path);
    if (r >= 0)
        r = sd_bus_message_new_method_call(
            bus, &call, "org.freedesktop.login1", path, "org.freedesktop.DBus.Properties", "Get");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', "org.freedesktop.login1.Session");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', "LockedHint");
    if (r >= 0) r = keygate_bus_call_until(bus, call, deadline, &reply, answer->error_name);
    if (r >= 0) r = sd_bus_message_enter_container(reply, 'v', "b");
    int value = 0;
    if (r > 0) r = sd_bus_message_read_basic(reply, 'b', &value);
    if (r == 0) r = -EBADMSG;
    if (r > 0) {
        answer->locked = value ? 1 : 0;
        r = 0;
    }
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    free(path);
    // No flush: flushing waits for a bus that may never answer.
    sd_bus_close_unref(bus);
    return r;
}

#endif
