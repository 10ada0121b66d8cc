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
#include <systemd/sd-bus.h>
#include "loader.h"

/// The answer of `keygate_logind_locked_hint`, filled in by it.
typedef struct {
    /// 1 when the session's LockedHint is true, 0 when false (valid only when the call returns 0).
    int locked;
    /// The D-Bus error name of an error reply, or empty.
    char error_name[128];
} keygate_logind_answer;

/// Reply state shared by the call and its callback.
typedef struct {
    int done;
    int result;
    keygate_logind_answer *answer;
} keygate_logind_pending;

static inline int keygate_logind_on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    keygate_logind_pending *pending = (keygate_logind_pending *)userdata;
    pending->done = 1;
    const sd_bus_error *error = sd_bus_message_get_error(reply);
    if (error != NULL) {
        if (error->name != NULL) {
            strncpy(pending->answer->error_name, error->name, sizeof(pending->answer->error_name) - 1);
            pending->answer->error_name[sizeof(pending->answer->error_name) - 1] = '\0';
        }
        int code = sd_bus_error_get_errno(error);
        pending->result = code > 0 ? -code : -EIO;
        return 0;
    }
    int r = sd_bus_message_enter_container(reply, 'v', "b");
    if (r <= 0) {
        pending->result = r < 0 ? r : -EBADMSG;
        return 0;
    }
    int value = 0;
    r = sd_bus_message_read_basic(reply, 'b', &value);
    if (r <= 0) {
        pending->result = r < 0 ? r : -EBADMSG;
        return 0;
    }
    pending->answer->locked = value ? 1 : 0;
    pending->result = 0;
    return 0;
}

/// Asks logind for the `LockedHint` of the session `session_id`: reads the property on
/// `/org/freedesktop/login1/session/<escaped id>` (`org.freedesktop.login1.Session`).
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
    if (!keygate_sd_bus_load()) return -ELIBACC;
    int r;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t deadline = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u + timeout_usec;

    sd_bus *bus = NULL;
    r = sd_bus_new(&bus);
    if (r < 0) return r;
    r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        sd_bus_unref(bus);
        return r;
    }
    sd_bus_set_method_call_timeout(bus, timeout_usec);

    char *path = NULL;
    sd_bus_message *call = NULL;
    sd_bus_slot *slot = NULL;
    keygate_logind_pending pending = {0, 0, answer};
    r = sd_bus_path_encode("/org/freedesktop/login1/session", session_id, &path);
    if (r >= 0)
        r = sd_bus_message_new_method_call(
            bus, &call, "org.freedesktop.login1", path, "org.freedesktop.DBus.Properties", "Get");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', "org.freedesktop.login1.Session");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', "LockedHint");
    if (r >= 0) r = sd_bus_call_async(bus, &slot, call, keygate_logind_on_reply, &pending, timeout_usec);
    while (r >= 0 && !pending.done) {
        r = sd_bus_process(bus, NULL);
        if (r < 0 || pending.done) break;
        if (r > 0) continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
        if (current >= deadline) {
            r = -ETIMEDOUT;
            break;
        }
        r = sd_bus_wait(bus, deadline - current);
    }
    if (r >= 0) r = pending.result;
    sd_bus_slot_unref(slot);
    sd_bus_message_unref(call);
    free(path);
    // No flush: flushing waits for a bus that may never answer.
    sd_bus_close_unref(bus);
    return r;
}

#endif
