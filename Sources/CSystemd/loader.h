#ifndef KEYGATE_CSYSTEMD_LOADER_H
#define KEYGATE_CSYSTEMD_LOADER_H

// libsystemd is opened at the first D-Bus question, not linked: a `keygate get` of a plain item
// outside a login session never asks the bus, and loading libsystemd with its dependencies
// (libgcrypt, liblzma, libzstd, liblz4, libcap) cost about half a millisecond of every start.
// Each sd-bus function the shims call goes through the table below (the macros at the end), and
// every entry point calls keygate_sd_bus_load() first: without libsystemd it fails with -ELIBACC,
// which the callers treat as a failure (locked; biometry unavailable), never as "no session".

#include <dlfcn.h>
#include <errno.h>
#include <systemd/sd-bus.h>

#define KEYGATE_SD_BUS_FUNCTIONS(X)                                                                                  \
    X(sd_bus_call_async)                                                                                             \
    X(sd_bus_close_unref)                                                                                            \
    X(sd_bus_error_get_errno)                                                                                        \
    X(sd_bus_message_append_basic)                                                                                   \
    X(sd_bus_message_enter_container)                                                                                \
    X(sd_bus_message_exit_container)                                                                                 \
    X(sd_bus_message_get_error)                                                                                      \
    X(sd_bus_message_new_method_call)                                                                                \
    X(sd_bus_message_read_basic)                                                                                     \
    X(sd_bus_message_ref)                                                                                            \
    X(sd_bus_message_unref)                                                                                          \
    X(sd_bus_new)                                                                                                    \
    X(sd_bus_path_encode)                                                                                            \
    X(sd_bus_process)                                                                                                \
    X(sd_bus_set_address)                                                                                            \
    X(sd_bus_set_bus_client)                                                                                         \
    X(sd_bus_set_method_call_timeout)                                                                                \
    X(sd_bus_slot_unref)                                                                                             \
    X(sd_bus_start)                                                                                                  \
    X(sd_bus_unref)                                                                                                  \
    X(sd_bus_wait)                                                                                                   \
    /* The Secret Service frontend's server side, called from Swift through the table: */                            \
    X(sd_bus_add_fallback)                                                                                           \
    X(sd_bus_call)                                                                                                   \
    X(sd_bus_error_free)                                                                                             \
    X(sd_bus_message_append_array)                                                                                   \
    X(sd_bus_message_close_container)                                                                                \
    X(sd_bus_message_get_interface)                                                                                  \
    X(sd_bus_message_get_member)                                                                                     \
    X(sd_bus_message_get_path)                                                                                       \
    X(sd_bus_message_get_sender)                                                                                     \
    X(sd_bus_message_get_type)                                                                                       \
    X(sd_bus_message_new_method_error)                                                                               \
    X(sd_bus_message_new_method_return)                                                                              \
    X(sd_bus_message_open_container)                                                                                 \
    X(sd_bus_message_peek_type)                                                                                      \
    X(sd_bus_message_read_array)                                                                                     \
    X(sd_bus_request_name)                                                                                           \
    X(sd_bus_send)                                                                                                   \
    X(sd_bus_flush)                                                                                                  \
    X(sd_bus_get_fd)                                                                                                 \
    X(sd_bus_get_events)                                                                                             \
    X(sd_bus_get_timeout)

#define KEYGATE_SD_BUS_POINTER(name) __typeof__(name) *p_##name;

/// The sd-bus functions, resolved from libsystemd.so.0; `state` is 0 before the first load, 1 when
/// every function was found, -1 when the library or a function is missing.
typedef struct {
    int state;
    KEYGATE_SD_BUS_FUNCTIONS(KEYGATE_SD_BUS_POINTER)
} keygate_sd_bus_table;

/// The table (a function-local static, so every user of the header shares the emitted one).
static inline keygate_sd_bus_table *keygate_sd_bus(void) {
    static keygate_sd_bus_table table;
    return &table;
}

#define KEYGATE_SD_BUS_RESOLVE(name)                                                                                 \
    if (found) found = (table->p_##name = (__typeof__(table->p_##name))dlsym(library, #name)) != NULL;

/// Opens libsystemd once (per object file; dlopen keeps one copy). Returns 1 when sd-bus can be
/// used, 0 when it cannot.
static inline int keygate_sd_bus_load(void) {
    keygate_sd_bus_table *table = keygate_sd_bus();
    int state = __atomic_load_n(&table->state, __ATOMIC_ACQUIRE);
    if (state != 0) return state > 0;
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    int found = library != NULL;
    KEYGATE_SD_BUS_FUNCTIONS(KEYGATE_SD_BUS_RESOLVE)
    __atomic_store_n(&table->state, found ? 1 : -1, __ATOMIC_RELEASE);
    return found;
}

// From here on, every sd-bus call in the shims goes through the table.
#define sd_bus_call_async (*keygate_sd_bus()->p_sd_bus_call_async)
#define sd_bus_close_unref (*keygate_sd_bus()->p_sd_bus_close_unref)
#define sd_bus_error_get_errno (*keygate_sd_bus()->p_sd_bus_error_get_errno)
#define sd_bus_message_append_basic (*keygate_sd_bus()->p_sd_bus_message_append_basic)
#define sd_bus_message_enter_container (*keygate_sd_bus()->p_sd_bus_message_enter_container)
#define sd_bus_message_exit_container (*keygate_sd_bus()->p_sd_bus_message_exit_container)
#define sd_bus_message_get_error (*keygate_sd_bus()->p_sd_bus_message_get_error)
#define sd_bus_message_new_method_call (*keygate_sd_bus()->p_sd_bus_message_new_method_call)
#define sd_bus_message_read_basic (*keygate_sd_bus()->p_sd_bus_message_read_basic)
#define sd_bus_message_ref (*keygate_sd_bus()->p_sd_bus_message_ref)
#define sd_bus_message_unref (*keygate_sd_bus()->p_sd_bus_message_unref)
#define sd_bus_new (*keygate_sd_bus()->p_sd_bus_new)
#define sd_bus_path_encode (*keygate_sd_bus()->p_sd_bus_path_encode)
#define sd_bus_process (*keygate_sd_bus()->p_sd_bus_process)
#define sd_bus_set_address (*keygate_sd_bus()->p_sd_bus_set_address)
#define sd_bus_set_bus_client (*keygate_sd_bus()->p_sd_bus_set_bus_client)
#define sd_bus_set_method_call_timeout (*keygate_sd_bus()->p_sd_bus_set_method_call_timeout)
#define sd_bus_slot_unref (*keygate_sd_bus()->p_sd_bus_slot_unref)
#define sd_bus_start (*keygate_sd_bus()->p_sd_bus_start)
#define sd_bus_unref (*keygate_sd_bus()->p_sd_bus_unref)
#define sd_bus_wait (*keygate_sd_bus()->p_sd_bus_wait)

#endif
