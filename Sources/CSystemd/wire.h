#ifndef KEYGATE_CSYSTEMD_WIRE_H
#define KEYGATE_CSYSTEMD_WIRE_H

// logind's LockedHint asked on the D-Bus wire directly, without libsystemd: loading libsystemd and
// the five libraries it needs (libgcrypt, liblzma, libzstd, liblz4, libcap, all bound at load) was
// most of what a session lock question cost a `keygate get` in a login session. One connection to
// a `unix:path=` bus, the EXTERNAL handshake, Hello and one Properties.Get, sent together and
// answered within the caller's deadline; the question can go out ahead of need (keygate_wire_ask)
// and its answer be read when the state is needed (keygate_wire_answer). Any other address, and
// fprintd's questions, still go through sd-bus (bus.h).
// Everything read from the bus is bounds-checked: a malformed message is -EBADMSG, never trusted.

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/// The largest message accepted from the bus (a LockedHint reply is under 200 bytes).
#define KEYGATE_WIRE_MAX_MESSAGE 16384

/// The socket path of a plain `unix:path=` bus address (up to any `,key=value`), copied to `out`:
/// 1 when `address` is one, 0 otherwise (another transport, or an escaped `%xx` path).
static inline int keygate_wire_socket_path(const char *address, char *out, size_t size) {
    if (strncmp(address, "unix:path=", 10) != 0) return 0;
    const char *path = address + 10;
    size_t length = strcspn(path, ",");
    if (length >= size || memchr(path, '%', length) != NULL) return 0;
    memcpy(out, path, length);
    out[length] = '\0';
    return 1;
}

/// An outgoing message being put together (little-endian, as this machine's D-Bus peers accept).
typedef struct {
    unsigned char bytes[1024];
    size_t length;
    int overflow;
} keygate_wire_buffer;

static inline void keygate_wire_pad(keygate_wire_buffer *b, size_t alignment) {
    while (b->length % alignment != 0) {
        if (b->length >= sizeof(b->bytes)) { b->overflow = 1; return; }
        b->bytes[b->length++] = 0;
    }
}

static inline void keygate_wire_bytes(keygate_wire_buffer *b, const void *data, size_t count) {
    if (b->length + count > sizeof(b->bytes)) { b->overflow = 1; return; }
    memcpy(b->bytes + b->length, data, count);
    b->length += count;
}

static inline void keygate_wire_u32(keygate_wire_buffer *b, uint32_t value) {
    keygate_wire_pad(b, 4);
    unsigned char le[4] = {(unsigned char)value, (unsigned char)(value >> 8), (unsigned char)(value >> 16),
                           (unsigned char)(value >> 24)};
    keygate_wire_bytes(b, le, 4);
}

/// A STRING or OBJECT_PATH: length, bytes, NUL.
static inline void keygate_wire_string(keygate_wire_buffer *b, const char *text) {
    size_t count = strlen(text);
    keygate_wire_u32(b, (uint32_t)count);
    keygate_wire_bytes(b, text, count + 1);
}

/// A header field: STRUCT(BYTE code, VARIANT value) whose value has the one-letter type `type`.
static inline void keygate_wire_field(keygate_wire_buffer *b, unsigned char code, char type, const char *text) {
    keygate_wire_pad(b, 8);
    unsigned char head[4] = {code, 1, (unsigned char)type, 0};
    keygate_wire_bytes(b, head, 4);
    if (type == 'g') {
        size_t count = strlen(text);
        unsigned char length = (unsigned char)count;
        keygate_wire_bytes(b, &length, 1);
        keygate_wire_bytes(b, text, count + 1);
    } else {
        keygate_wire_string(b, text);
    }
}

/// Writes a METHOD_CALL with `serial` into the empty buffer `b` (offsets and padding count from the
/// message's start); `first` and `second` are its STRING arguments when `signature` is "ss" (NULL
/// otherwise).
static inline void keygate_wire_call(
    keygate_wire_buffer *b, uint32_t serial, const char *destination, const char *path, const char *interface,
    const char *member, const char *signature, const char *first, const char *second) {
    keygate_wire_buffer body = {{0}, 0, 0};
    if (signature != NULL) {
        keygate_wire_string(&body, first);
        keygate_wire_string(&body, second);
    }
    unsigned char fixed[4] = {'l', 1, 0, 1};  // little-endian, METHOD_CALL, no flags, version 1
    keygate_wire_bytes(b, fixed, 4);
    keygate_wire_u32(b, (uint32_t)body.length);
    keygate_wire_u32(b, serial);
    keygate_wire_u32(b, 0);  // the header fields' length, filled in below
    keygate_wire_field(b, 1, 'o', path);
    keygate_wire_field(b, 2, 's', interface);
    keygate_wire_field(b, 3, 's', member);
    keygate_wire_field(b, 6, 's', destination);
    if (signature != NULL) keygate_wire_field(b, 8, 'g', signature);
    uint32_t fields_length = (uint32_t)(b->length - 16);
    b->bytes[12] = (unsigned char)fields_length;
    b->bytes[13] = (unsigned char)(fields_length >> 8);
    b->bytes[14] = (unsigned char)(fields_length >> 16);
    b->bytes[15] = (unsigned char)(fields_length >> 24);
    keygate_wire_pad(b, 8);
    keygate_wire_bytes(b, body.bytes, body.length);
    if (body.overflow) b->overflow = 1;
}

/// `prefix` + "/" + `label` escaped as sd-bus escapes object path labels: every byte but ASCII
/// letters, and digits after the first byte, becomes `_` and two lowercase hex digits; an empty
/// label is `_`. Returns -ENAMETOOLONG when it does not fit.
static inline int keygate_wire_path(char *out, size_t size, const char *prefix, const char *label) {
    size_t used = (size_t)snprintf(out, size, "%s/", prefix);
    if (used >= size) return -ENAMETOOLONG;
    if (*label == '\0') {
        if (used + 2 > size) return -ENAMETOOLONG;
        out[used++] = '_';
        out[used] = '\0';
        return 0;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; label[i] != '\0'; i++) {
        unsigned char c = (unsigned char)label[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
        if (used + (plain ? 1 : 3) + 1 > size) return -ENAMETOOLONG;
        if (plain) {
            out[used++] = (char)c;
        } else {
            out[used++] = '_';
            out[used++] = hex[c >> 4];
            out[used++] = hex[c & 15];
        }
    }
    out[used] = '\0';
    return 0;
}

static inline uint64_t keygate_wire_now_usec(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

/// Waits until `fd` is ready for `events`, or -ETIMEDOUT at `deadline`.
static inline int keygate_wire_wait(int fd, short events, uint64_t deadline) {
    for (;;) {
        uint64_t now = keygate_wire_now_usec();
        if (now >= deadline) return -ETIMEDOUT;
        uint64_t left = (deadline - now + 999) / 1000;
        struct pollfd poll_fd = {fd, events, 0};
        int r = poll(&poll_fd, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -errno;
    }
}

static inline int keygate_wire_send(int fd, const unsigned char *bytes, size_t count, uint64_t deadline) {
    while (count > 0) {
        ssize_t sent = send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            bytes += sent;
            count -= (size_t)sent;
        } else if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
            int r = keygate_wire_wait(fd, POLLOUT, deadline);
            if (r < 0) return r;
        } else {
            return sent < 0 ? -errno : -ECONNRESET;
        }
    }
    return 0;
}

/// Reads exactly `count` bytes (-ECONNRESET when the bus hangs up first).
static inline int keygate_wire_receive(int fd, unsigned char *bytes, size_t count, uint64_t deadline) {
    while (count > 0) {
        ssize_t got = recv(fd, bytes, count, MSG_DONTWAIT);
        if (got > 0) {
            bytes += got;
            count -= (size_t)got;
        } else if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            int r = keygate_wire_wait(fd, POLLIN, deadline);
            if (r < 0) return r;
        } else {
            return got < 0 ? -errno : -ECONNRESET;
        }
    }
    return 0;
}

/// The bus's one-line answer to AUTH, without its "\r\n". BEGIN and the calls went out with AUTH,
/// so the bus's replies to them may follow the line in the socket: the line is found with
/// MSG_PEEK and exactly its bytes are consumed, leaving the replies for keygate_wire_next. A
/// chunk without the line's end holds only line bytes (the replies come after it); it is taken
/// whole and the wait resumes. Anything but one line ending in "\r\n" is -EBADMSG.
static inline int keygate_wire_line(int fd, char *line, size_t size, uint64_t deadline) {
    size_t used = 0;
    for (;;) {
        if (used + 1 >= size) return -EBADMSG;
        size_t room = size - 1 - used;
        ssize_t peeked = recv(fd, line + used, room, MSG_DONTWAIT | MSG_PEEK);
        if (peeked > 0) {
            char *end = memchr(line + used, '\n', (size_t)peeked);
            size_t take = end == NULL ? (size_t)peeked : (size_t)(end - (line + used)) + 1;
            ssize_t got;
            do {
                got = recv(fd, line + used, take, MSG_DONTWAIT);
            } while (got < 0 && errno == EINTR);
            if (got != (ssize_t)take) return got < 0 ? -errno : -EBADMSG;
            used += take;
            if (end == NULL) continue;
            if (used < 2 || line[used - 2] != '\r') return -EBADMSG;
            line[used - 2] = '\0';
            return 0;
        }
        if (peeked < 0 && (errno == EAGAIN || errno == EINTR)) {
            int r = keygate_wire_wait(fd, POLLIN, deadline);
            if (r < 0) return r;
        } else {
            return peeked < 0 ? -errno : -ECONNRESET;
        }
    }
}

static inline uint32_t keygate_wire_read_u32(const unsigned char *p, int big_endian) {
    return big_endian ? ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3])
                      : ((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]);
}

/// What the reader needs of one incoming message's header.
typedef struct {
    unsigned char type;
    int big_endian;
    uint32_t reply_serial;  // 0 when absent
    char error_name[128];
    char signature[64];
    const unsigned char *body;
    uint32_t body_length;
} keygate_wire_message;

/// Reads the next whole message into `storage` and parses its header.
static inline int keygate_wire_next(
    int fd, unsigned char *storage, uint64_t deadline, keygate_wire_message *message) {
    int r = keygate_wire_receive(fd, storage, 16, deadline);
    if (r < 0) return r;
    if ((storage[0] != 'l' && storage[0] != 'B') || storage[3] != 1) return -EBADMSG;
    int big = storage[0] == 'B';
    uint32_t body_length = keygate_wire_read_u32(storage + 4, big);
    uint32_t fields_length = keygate_wire_read_u32(storage + 12, big);
    if (fields_length > KEYGATE_WIRE_MAX_MESSAGE || body_length > KEYGATE_WIRE_MAX_MESSAGE) return -EBADMSG;
    size_t header_end = 16 + (size_t)fields_length;
    size_t body_start = (header_end + 7) & ~(size_t)7;
    size_t total = body_start + body_length;
    if (total > KEYGATE_WIRE_MAX_MESSAGE) return -EBADMSG;
    r = keygate_wire_receive(fd, storage + 16, total - 16, deadline);
    if (r < 0) return r;
    message->type = storage[1];
    message->big_endian = big;
    message->reply_serial = 0;
    message->error_name[0] = '\0';
    message->signature[0] = '\0';
    message->body = storage + body_start;
    message->body_length = body_length;
    size_t at = 16;
    while (at < header_end) {
        at = (at + 7) & ~(size_t)7;
        if (at + 4 > header_end) return -EBADMSG;
        unsigned char code = storage[at];
        unsigned char signature_length = storage[at + 1];
        if (signature_length != 1 || storage[at + 3] != 0) return -EBADMSG;
        char type = (char)storage[at + 2];
        at += 4;
        if (type == 'u') {
            at = (at + 3) & ~(size_t)3;
            if (at + 4 > header_end) return -EBADMSG;
            if (code == 5) message->reply_serial = keygate_wire_read_u32(storage + at, big);
            at += 4;
        } else if (type == 's' || type == 'o') {
            at = (at + 3) & ~(size_t)3;
            if (at + 4 > header_end) return -EBADMSG;
            uint32_t length = keygate_wire_read_u32(storage + at, big);
            at += 4;
            if (length > header_end - at || at + length >= header_end || storage[at + length] != 0) return -EBADMSG;
            if (code == 4) {
                size_t copy = length < sizeof(message->error_name) - 1 ? length : sizeof(message->error_name) - 1;
                memcpy(message->error_name, storage + at, copy);
                message->error_name[copy] = '\0';
            }
            at += length + 1;
        } else if (type == 'g') {
            if (at + 1 > header_end) return -EBADMSG;
            size_t length = storage[at];
            at += 1;
            if (at + length >= header_end || storage[at + length] != 0) return -EBADMSG;
            if (code == 8) {
                if (length >= sizeof(message->signature)) return -EBADMSG;
                memcpy(message->signature, storage + at, length + 1);
            }
            at += length + 1;
        } else {
            return -EBADMSG;
        }
    }
    return 0;
}

/// Connects to the bus socket `socket_path` and sends the whole question for the LockedHint of
/// `session_id` (the EXTERNAL handshake, BEGIN, Hello and the Get, in one write: SASL on a bus
/// need not be synchronous, as dbus-broker documents and dbus-daemon does; the bus answers AUTH
/// with one line and then the calls, in order, so the question costs one round trip to the bus,
/// not two), without waiting for an answer. Returns the
/// socket, from which keygate_wire_answer reads the answer; -ENOENT when there is no socket; a
/// negative errno when it cannot be connected to or written by `deadline` (CLOCK_MONOTONIC, µs).
static inline int keygate_wire_ask(const char *socket_path, const char *session_id, uint64_t deadline) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof(address.sun_path)) return -ENAMETOOLONG;
    strcpy(address.sun_path, socket_path);
    char path[512];
    int r = keygate_wire_path(path, sizeof(path), "/org/freedesktop/login1/session", session_id);
    if (r < 0) return r;
    keygate_wire_buffer hello_call = {{0}, 0, 0}, get_call = {{0}, 0, 0};
    keygate_wire_call(
        &hello_call, 1, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", NULL, NULL,
        NULL);
    keygate_wire_call(
        &get_call, 2, "org.freedesktop.login1", path, "org.freedesktop.DBus.Properties", "Get", "ss",
        "org.freedesktop.login1.Session", "LockedHint");
    if (hello_call.overflow || get_call.overflow) return -ENAMETOOLONG;

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    // A Unix socket's connect does not go on in the background: EAGAIN is a full listen queue,
    // tried again every millisecond until the deadline.
    while (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        r = -errno;
        if (r == -EISCONN) break;
        if (r == -EAGAIN || r == -EINTR) {
            if (keygate_wire_now_usec() >= deadline) {
                r = -ETIMEDOUT;
            } else {
                struct timespec pause = {0, 1000000};
                nanosleep(&pause, NULL);
                continue;
            }
        }
        close(fd);
        return r;
    }
    // EXTERNAL authentication as this effective uid (the bus checks it against SO_PEERCRED). A
    // bus that rejects it answers REJECTED: keygate_wire_answer returns -EACCES.
    char uid[32], hello[96];
    snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
    int used = snprintf(hello, sizeof(hello), "%cAUTH EXTERNAL ", 0);
    for (size_t i = 0; uid[i] != '\0' && used + 3 < (int)sizeof(hello); i++) {
        used += snprintf(hello + used, sizeof(hello) - (size_t)used, "%02x", (unsigned char)uid[i]);
    }
    used += snprintf(hello + used, sizeof(hello) - (size_t)used, "\r\nBEGIN\r\n");
    unsigned char handshake[sizeof(hello) + sizeof(hello_call.bytes) + sizeof(get_call.bytes)];
    memcpy(handshake, hello, (size_t)used);
    memcpy(handshake + used, hello_call.bytes, hello_call.length);
    memcpy(handshake + used + hello_call.length, get_call.bytes, get_call.length);
    r = keygate_wire_send(fd, handshake, (size_t)used + hello_call.length + get_call.length, deadline);
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}

/// Reads the answer to keygate_wire_ask's question from its socket `fd` by `deadline`, then
/// closes `fd`. Returns 0 with `*locked` set; -ETIMEDOUT past the deadline; -EACCES when the bus
/// refused the handshake; for an error reply a negative errno with its name in `error_name`;
/// -EBADMSG for a reply that is not a boolean in a variant.
static inline int keygate_wire_answer(int fd, uint64_t deadline, int *locked, char error_name[128]) {
    char line[256];
    int r = keygate_wire_line(fd, line, sizeof(line), deadline);
    if (r == 0 && strncmp(line, "OK ", 3) != 0) r = -EACCES;

    unsigned char *storage = r == 0 ? malloc(KEYGATE_WIRE_MAX_MESSAGE) : NULL;
    if (r == 0 && storage == NULL) r = -ENOMEM;
    keygate_wire_message message;
    while (r == 0) {
        r = keygate_wire_next(fd, storage, deadline, &message);
        if (r < 0) break;
        if (message.reply_serial != 2 || (message.type != 2 && message.type != 3)) continue;
        if (message.type == 3) {
            strncpy(error_name, message.error_name, 127);
            error_name[127] = '\0';
            r = -EIO;
            break;
        }
        // The reply to Get is one VARIANT holding a BOOLEAN: signature "v", then 1 'b' NUL, pad, u32.
        if (strcmp(message.signature, "v") != 0 || message.body_length < 8 || message.body[0] != 1 ||
            message.body[1] != 'b' || message.body[2] != 0) {
            r = -EBADMSG;
            break;
        }
        uint32_t value = keygate_wire_read_u32(message.body + 4, message.big_endian);
        if (value > 1) {
            r = -EBADMSG;
            break;
        }
        *locked = (int)value;
        break;
    }
    free(storage);
    close(fd);
    return r;
}

/// Asks the logind on the bus socket `socket_path` for the LockedHint of `session_id` and waits
/// for the answer, all within `deadline` (keygate_wire_ask, then keygate_wire_answer).
static inline int keygate_wire_locked_hint(
    const char *socket_path, const char *session_id, uint64_t deadline, int *locked, char error_name[128]) {
    int fd = keygate_wire_ask(socket_path, session_id, deadline);
    if (fd < 0) return fd;
    return keygate_wire_answer(fd, deadline, locked, error_name);
}

#endif
