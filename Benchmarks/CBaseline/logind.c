// A stand-in for systemd-logind on a private bus, for the benchmark's login-session row: it owns
// org.freedesktop.login1 and answers LockedHint (false) for one session, written against sd-bus
// as logind itself is, so the row times what a `keygate get` in a desktop session asks and waits
// for, not an interpreter's dispatch.

#include "KeygateBenchC.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

static _Atomic int64_t kb_logind_answers;

static int kb_locked_hint(
    sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
    void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)interface;
    (void)property;
    (void)userdata;
    (void)error;
    atomic_fetch_add(&kb_logind_answers, 1);
    return sd_bus_message_append(reply, "b", 0);
}

static const sd_bus_vtable kb_session_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("LockedHint", "b", kb_locked_hint, 0, 0),
    SD_BUS_VTABLE_END,
};

static void *kb_logind_serve(void *argument) {
    sd_bus *bus = argument;
    for (;;) {
        int r = sd_bus_process(bus, NULL);
        if (r < 0) break;
        if (r > 0) continue;
        if (sd_bus_wait(bus, UINT64_MAX) < 0) break;
    }
    sd_bus_flush_close_unref(bus);
    return NULL;
}

int64_t kb_logind_answered(void) { return atomic_load(&kb_logind_answers); }

int kb_logind_start(const char *address, const char *session) {
    sd_bus *bus = NULL;
    char *path = NULL;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r >= 0) r = sd_bus_path_encode("/org/freedesktop/login1/session", session, &path);
    if (r >= 0) r = sd_bus_add_object_vtable(bus, NULL, path, "org.freedesktop.login1.Session", kb_session_vtable, NULL);
    if (r >= 0) r = sd_bus_request_name(bus, "org.freedesktop.login1", 0);
    free(path);
    pthread_t thread;
    if (r >= 0) r = -pthread_create(&thread, NULL, kb_logind_serve, bus);
    if (r < 0) {
        sd_bus_unref(bus);
        return r;
    }
    pthread_detach(thread);
    return 0;
}

int kb_logind_ask(const char *address, const char *session) {
    sd_bus *bus = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    char *path = NULL;
    int locked = 0;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r >= 0) r = sd_bus_path_encode("/org/freedesktop/login1/session", session, &path);
    if (r >= 0)
        r = sd_bus_get_property_trivial(
            bus, "org.freedesktop.login1", path, "org.freedesktop.login1.Session", "LockedHint", &error, 'b', &locked);
    free(path);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : locked != 0;
}
