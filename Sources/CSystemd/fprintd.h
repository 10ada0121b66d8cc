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
#include "bus.h"

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
    uint64_t deadline = keygate_bus_now_usec() + timeout_usec;
    sd_bus *bus = NULL;
    int r = keygate_bus_open(address, timeout_usec, &bus);
    if (r < 0) return r;

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
