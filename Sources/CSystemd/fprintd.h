#ifndef KEYGATE_CSYSTEMD_FPRINTD_H
#define KEYGATE_CSYSTEMD_FPRINTD_H

// The enrolled fingers, asked of fprintd (net.reactivated.Fprint) over sd-bus in process, the way
// `fprintd-list` asks: Manager.GetDevices, then per device its `name` and `scan-type` properties and
// ListEnrolledFingers(user). Swift cannot call sd-bus's variadic helpers, and every step shares one
// deadline (sd-bus's method-call timeout does not cover a bus that never finishes the handshake).

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>
#include "loader.h"

/// The answer of `keygate_fprintd_fingers`, filled in by it.
typedef struct {
    /// One line per reader, `D<name> (<scan-type>)`, each followed by one line per enrolled finger,
    /// `F<finger>`; malloc'd (free it with `keygate_fprintd_answer_free`), NULL when nothing was read.
    char *listing;
    /// The D-Bus error name of an error reply, or empty.
    char error_name[128];
} keygate_fprintd_answer;

static inline void keygate_fprintd_answer_free(keygate_fprintd_answer *answer) {
    free(answer->listing);
    answer->listing = NULL;
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
    int r = sd_bus_call_async(bus, &slot, call, keygate_bus_on_reply, &pending, deadline - now);
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

/// A growing text buffer for the listing.
typedef struct {
    char *text;
    size_t length;
    size_t capacity;
} keygate_fprintd_text;

/// Appends `tag`, `value` and a newline; a value with a control character is refused (-EBADMSG),
/// so one line is always one name.
static inline int keygate_fprintd_append(keygate_fprintd_text *text, char tag, const char *value, const char *suffix) {
    size_t value_length = strlen(value), suffix_length = suffix ? strlen(suffix) : 0;
    for (size_t i = 0; i < value_length; i++)
        if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) return -EBADMSG;
    size_t needed = text->length + value_length + suffix_length + 3;
    if (needed > text->capacity) {
        size_t capacity = needed * 2 < 256 ? 256 : needed * 2;
        char *grown = (char *)realloc(text->text, capacity);
        if (grown == NULL) return -ENOMEM;
        text->text = grown;
        text->capacity = capacity;
    }
    text->text[text->length++] = tag;
    memcpy(text->text + text->length, value, value_length);
    text->length += value_length;
    if (suffix_length) memcpy(text->text + text->length, suffix, suffix_length);
    text->length += suffix_length;
    text->text[text->length++] = '\n';
    text->text[text->length] = '\0';
    return 0;
}

/// Reads the string property `name` of the reader at `path`.
static inline int keygate_fprintd_property(
    sd_bus *bus, const char *path, const char *name, uint64_t deadline, char **value, char error_name[128]) {
    sd_bus_message *call = NULL, *reply = NULL;
    int r = sd_bus_message_new_method_call(
        bus, &call, "net.reactivated.Fprint", path, "org.freedesktop.DBus.Properties", "Get");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', "net.reactivated.Fprint.Device");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', name);
    if (r >= 0) r = keygate_bus_call_until(bus, call, deadline, &reply, error_name);
    if (r >= 0) r = sd_bus_message_enter_container(reply, 'v', "s");
    const char *text = NULL;
    if (r > 0) r = sd_bus_message_read_basic(reply, 's', &text);
    if (r == 0) r = -EBADMSG;
    if (r > 0) {
        *value = strdup(text);
        r = *value ? 0 : -ENOMEM;
    }
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return r;
}

/// Appends the reader at `path` and the fingers `user` enrolled on it.
static inline int keygate_fprintd_device(
    sd_bus *bus, const char *path, const char *user, uint64_t deadline, keygate_fprintd_text *text,
    char error_name[128]) {
    char *name = NULL, *scan_type = NULL;
    int r = keygate_fprintd_property(bus, path, "name", deadline, &name, error_name);
    if (r >= 0) r = keygate_fprintd_property(bus, path, "scan-type", deadline, &scan_type, error_name);
    if (r >= 0) {
        // As fprintd-list prints the reader: "<name> (<scan-type>)".
        size_t length = strlen(name) + strlen(scan_type) + 4;
        char *reader = (char *)malloc(length);
        if (reader == NULL) {
            r = -ENOMEM;
        } else {
            snprintf(reader, length, "%s (%s)", name, scan_type);
            r = keygate_fprintd_append(text, 'D', reader, NULL);
            free(reader);
        }
    }
    free(name);
    free(scan_type);
    if (r < 0) return r;

    sd_bus_message *call = NULL, *reply = NULL;
    r = sd_bus_message_new_method_call(
        bus, &call, "net.reactivated.Fprint", path, "net.reactivated.Fprint.Device", "ListEnrolledFingers");
    if (r >= 0) r = sd_bus_message_append_basic(call, 's', user);
    if (r >= 0) r = keygate_bus_call_until(bus, call, deadline, &reply, error_name);
    if (r < 0 && strcmp(error_name, "net.reactivated.Fprint.Error.NoEnrolledPrints") == 0) {
        error_name[0] = '\0';  // nothing enrolled on this reader: no finger lines
        r = 0;
    } else if (r >= 0) {
        r = sd_bus_message_enter_container(reply, 'a', "s");
        if (r == 0) r = -EBADMSG;
        const char *finger = NULL;
        while (r > 0 && (r = sd_bus_message_read_basic(reply, 's', &finger)) > 0) {
            int appended = keygate_fprintd_append(text, 'F', finger, NULL);
            if (appended < 0) r = appended;
        }
        if (r == 0) r = sd_bus_message_exit_container(reply);
    }
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return r < 0 ? r : 0;
}

/// Asks fprintd on the bus at `address` which fingers `user` enrolled, on every reader, within
/// `timeout_usec` for everything (connecting, authenticating, every call).
///
/// Returns 0 with `answer->listing` set (empty text when there is no reader); `-ENOENT` when there is
/// no bus socket; `-ELIBACC` when libsystemd cannot be opened; a negative errno otherwise (`answer->error_name` names a D-Bus error reply, if one
/// came: `org.freedesktop.DBus.Error.ServiceUnknown` when fprintd is not installed).
static inline int keygate_fprintd_fingers(
    const char *address, const char *user, uint64_t timeout_usec, keygate_fprintd_answer *answer) {
    answer->listing = NULL;
    answer->error_name[0] = '\0';
    if (!keygate_sd_bus_load()) return -ELIBACC;
    uint64_t deadline = keygate_bus_now_usec() + timeout_usec;

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

    keygate_fprintd_text text = {NULL, 0, 0};
    sd_bus_message *call = NULL, *reply = NULL;
    r = sd_bus_message_new_method_call(
        bus, &call, "net.reactivated.Fprint", "/net/reactivated/Fprint/Manager", "net.reactivated.Fprint.Manager",
        "GetDevices");
    if (r >= 0) r = keygate_bus_call_until(bus, call, deadline, &reply, answer->error_name);
    if (r >= 0) r = sd_bus_message_enter_container(reply, 'a', "o");
    if (r == 0) r = -EBADMSG;
    const char *path = NULL;
    while (r > 0 && (r = sd_bus_message_read_basic(reply, 'o', &path)) > 0) {
        int read = keygate_fprintd_device(bus, path, user, deadline, &text, answer->error_name);
        if (read < 0) r = read;
    }
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    // No flush: flushing waits for a bus that may never answer.
    sd_bus_close_unref(bus);
    if (r < 0) {
        free(text.text);
        return r;
    }
    answer->listing = text.text ? text.text : strdup("");
    return answer->listing ? 0 : -ENOMEM;
}

#endif
