#ifndef KEYGATE_CSYSTEMD_BUS_H
#define KEYGATE_CSYSTEMD_BUS_H

// What the logind and fprintd questions share: opening a client connection to a bus address, and a
// method call whose reply is awaited until a deadline (sd-bus's method-call timeout does not cover a
// bus that accepts the connection and never finishes the handshake).

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include "loader.h"

/// The socket path of a plain `unix:path=` bus address (up to any `,key=value`), copied to `out`:
/// 1 when `address` is one, 0 otherwise (another transport, or an escaped `%xx` path).
static inline int keygate_bus_socket_path(const char *address, char *out, size_t size) {
    if (strncmp(address, "unix:path=", 10) != 0) return 0;
    const char *path = address + 10;
    size_t length = strcspn(path, ",");
    if (length >= size || memchr(path, '%', length) != NULL) return 0;
    memcpy(out, path, length);
    out[length] = '\0';
    return 1;
}

/// Opens a client connection to the bus at `address` (`unix:path=…`); -ELIBACC without libsystemd,
/// -ENOENT when there is no socket there.
static inline int keygate_bus_open(const char *address, uint64_t timeout_usec, sd_bus **out) {
    *out = NULL;
    // No socket, no bus: said without loading libsystemd (a container, CI). Only a plain path is
    // checked; an escaped one (`%xx`) is left to sd-bus.
    char socket_path[4096];
    if (keygate_bus_socket_path(address, socket_path, sizeof(socket_path)) && access(socket_path, F_OK) != 0 &&
        errno == ENOENT)
        return -ENOENT;
    if (!keygate_sd_bus_load()) return -ELIBACC;
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return r;
    r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        sd_bus_unref(bus);
        return r;
    }
    sd_bus_set_method_call_timeout(bus, timeout_usec);
    *out = bus;
    return 0;
}

static inline uint64_t keygate_bus_now_usec(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

/// State shared by `keygate_bus_call_until` and its callback.
typedef struct {
    int done;
    sd_bus_message *reply;
} keygate_bus_pending;

static inline int keygate_bus_on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    keygate_bus_pending *pending = (keygate_bus_pending *)userdata;
    pending->done = 1;
    pending->reply = sd_bus_message_ref(reply);
    return 0;
}

/// Sends `call` and waits for its reply until `deadline` (CLOCK_MONOTONIC, µs). Returns 0 with
/// `*reply` set (unref it), `-ETIMEDOUT` past the deadline, or a negative errno for an error reply
/// (its name copied to `error_name`).
static inline int keygate_bus_call_until(
    sd_bus *bus, sd_bus_message *call, uint64_t deadline, sd_bus_message **reply, char error_name[128]) {
    *reply = NULL;
    keygate_bus_pending pending = {0, NULL};
    sd_bus_slot *slot = NULL;
    uint64_t now = keygate_bus_now_usec();
    if (now >= deadline) return -ETIMEDOUT;
    // sd-bus's own timeout is set past the deadline, so a silent peer is always this loop's
    // -ETIMEDOUT, never a NoReply error that sd-bus makes up.
    int r = sd_bus_call_async(bus, &slot, call, keygate_bus_on_reply, &pending, deadline - now + 1000000u);
    while (r >= 0 && !pending.done) {
        r = sd_bus_process(bus, NULL);
        if (r < 0 || pending.done) break;
        if (r > 0) continue;
        now = keygate_bus_now_usec();
        if (now >= deadline) {
            r = -ETIMEDOUT;
            break;
        }
        r = sd_bus_wait(bus, deadline - now);
    }
    sd_bus_slot_unref(slot);
    if (r < 0 && !pending.done) return r;
    if (pending.reply == NULL) return r < 0 ? r : -EIO;
    const sd_bus_error *error = sd_bus_message_get_error(pending.reply);
    if (error != NULL) {
        if (error->name != NULL) {
            strncpy(error_name, error->name, 127);
            error_name[127] = '\0';
        }
        int code = sd_bus_error_get_errno(error);
        sd_bus_message_unref(pending.reply);
        return code > 0 ? -code : -EIO;
    }
    *reply = pending.reply;
    return 0;
}

#endif
