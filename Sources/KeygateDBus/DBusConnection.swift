internal import CSystemd
import Glibc
import Synchronization

/// A connection to a message bus that serves objects: sd-bus (libsystemd, opened at first use),
/// driven by one thread of its own (``run()``), since sd-bus connections are not shared between
/// threads; ``stop()`` from any thread wakes it at once.
public final class DBusConnection: @unchecked Sendable {
    /// A method handler: runs on the connection's thread; its thrown ``DBusFailure`` is the
    /// error reply.
    public typealias Handler = (DBusMethodCall) throws(DBusFailure) -> [DBusValue]

    private let bus: OpaquePointer
    private let api: keygate_sd_bus_table
    /// A pipe that wakes the connection's thread: read end, write end.
    private let wake: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    private var handlers: [Unmanaged<HandlerBox>] = []

    private final class HandlerBox {
        let connection: DBusConnection
        let handler: Handler
        init(_ connection: DBusConnection, _ handler: @escaping Handler) {
            self.connection = connection
            self.handler = handler
        }
    }

    /// Connects to the bus at `address` (`unix:path=…`, as `DBUS_SESSION_BUS_ADDRESS` gives it).
    /// - Throws: a failure naming the address when libsystemd is missing or the bus does not answer.
    public init(address: String) throws(DBusFailure) {
        guard let api = SDBus.table else {
            throw DBusFailure("org.freedesktop.DBus.Error.Failed", "libsystemd cannot be loaded (libsystemd0)")
        }
        var bus: OpaquePointer?
        let opened = keygate_bus_open(address, 5_000_000, &bus)
        guard opened >= 0, let bus else {
            throw DBusFailure.failed("connecting to the bus at \(address)", errno: -opened)
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            _ = api.p_sd_bus_close_unref!(bus)
            throw DBusFailure.failed("pipe", errno: errno)
        }
        self.api = api
        self.bus = bus
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        self.wake = (ends[0], ends[1])
    }

    deinit {
        _ = api.p_sd_bus_flush!(bus)
        _ = api.p_sd_bus_close_unref!(bus)
        close(wake.read)
        close(wake.write)
        for box in handlers { box.release() }
    }

    /// Owns the well-known `name`, taking it from its owner when `replacing` and the owner
    /// allows it. Never queues.
    /// - Throws: `org.freedesktop.DBus.Error.AddressInUse` naming the name when another
    ///   connection owns it (and does not let it go).
    public func requestName(_ name: String, replacing: Bool) throws(DBusFailure) {
        // SD_BUS_NAME_REPLACE_EXISTING (1), SD_BUS_NAME_ALLOW_REPLACEMENT (2), no SD_BUS_NAME_QUEUE.
        let result = api.p_sd_bus_request_name!(bus, name, replacing ? 1 : 0)
        if result == -EEXIST {
            throw DBusFailure(
                "org.freedesktop.DBus.Error.AddressInUse", "another program owns \(name) on this bus")
        }
        guard result >= 0 else { throw DBusFailure.failed("requesting \(name)", errno: -result) }
    }

    /// Serves every method call to `prefix` and the paths under it with `handler`.
    public func serve(under prefix: String, _ handler: @escaping Handler) throws(DBusFailure) {
        let box = Unmanaged.passRetained(HandlerBox(self, handler))
        var slot: OpaquePointer?
        let result = api.p_sd_bus_add_fallback!(
            bus, &slot, prefix,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                return box.connection.dispatch(message, box.handler)
            }, box.toOpaque())
        guard result >= 0 else {
            box.release()
            throw DBusFailure.failed("serving \(prefix)", errno: -result)
        }
        handlers.append(box)
    }

    /// Ends ``run()`` at its next turn.
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// Serves on the calling thread until ``stop()`` or the bus closes.
    /// - Throws: the failure that ended the connection (the bus went away).
    public func run() throws(DBusFailure) {
        while !stopped.load(ordering: .relaxed) {
            let processed = api.p_sd_bus_process!(bus, nil)
            guard processed >= 0 else { throw DBusFailure.failed("the bus connection", errno: -processed) }
            if processed > 0 { continue }
            var pollers = [
                pollfd(fd: api.p_sd_bus_get_fd!(bus), events: Int16(api.p_sd_bus_get_events!(bus)), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            var deadline: UInt64 = 0
            var timeout: Int32 = -1
            if api.p_sd_bus_get_timeout!(bus, &deadline) > 0, deadline != UInt64.max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
                timeout =
                    deadline <= nowMicroseconds ? 0 : Int32(min((deadline - nowMicroseconds + 999) / 1000, 60_000))
            }
            let ready = poll(&pollers, 2, timeout)
            if ready < 0 && errno != EINTR { throw DBusFailure.failed("poll", errno: errno) }
            if pollers[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wake.read, &drained, drained.count) > 0 {}
            }
        }
    }

    /// Calls `interface.member` on `path` of `destination` and waits (at most `timeout`
    /// seconds) for its reply's values (on the connection's thread).
    /// - Throws: the error reply, or the failure of the call.
    public func call(
        _ destination: String, path: String, interface: String, member: String, _ values: [DBusValue],
        timeout: Int = 5
    ) throws(DBusFailure) -> [DBusValue] {
        var message: OpaquePointer?
        let made = api.p_sd_bus_message_new_method_call!(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else { throw DBusFailure.failed("calling \(member)", errno: -made) }
        defer { _ = api.p_sd_bus_message_unref!(message) }
        try SDBusMessage(pointer: message, api: api).append(values)
        var error = sd_bus_error()
        defer { api.p_sd_bus_error_free!(&error) }
        var reply: OpaquePointer?
        let called = api.p_sd_bus_call!(bus, message, UInt64(timeout) * 1_000_000, &error, &reply)
        guard called >= 0, let reply else {
            throw DBusFailure(
                error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                error.message.map { String(cString: $0) } ?? "\(member) failed (errno \(-called))", errno: -called)
        }
        defer { _ = api.p_sd_bus_message_unref!(reply) }
        return try SDBusMessage(pointer: reply, api: api).readAll()
    }

    // MARK: - Dispatch

    /// Answers one incoming message with `handler` (method calls only): 1 when answered here.
    private func dispatch(_ message: OpaquePointer, _ handler: Handler) -> Int32 {
        var type: UInt8 = 0
        // SD_BUS_MESSAGE_METHOD_CALL is 1.
        guard api.p_sd_bus_message_get_type!(message, &type) >= 0, type == 1 else { return 0 }
        func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        let reader = SDBusMessage(pointer: message, api: api)
        let outcome: Result<[DBusValue], DBusFailure>
        do throws(DBusFailure) {
            let call = DBusMethodCall(
                sender: text(api.p_sd_bus_message_get_sender!(message)),
                path: text(api.p_sd_bus_message_get_path!(message)),
                interface: text(api.p_sd_bus_message_get_interface!(message)),
                member: text(api.p_sd_bus_message_get_member!(message)), arguments: try reader.readAll())
            outcome = .success(try handler(call))
        } catch {
            outcome = .failure(error)
        }
        var reply: OpaquePointer?
        switch outcome {
        case .success(let values):
            guard api.p_sd_bus_message_new_method_return!(message, &reply) >= 0, let made = reply else {
                return -ENOMEM
            }
            do throws(DBusFailure) {
                try SDBusMessage(pointer: made, api: api).append(values)
            } catch {
                _ = api.p_sd_bus_message_unref!(made)
                return answer(message, with: error)
            }
        case .failure(let failure):
            return answer(message, with: failure)
        }
        defer { _ = api.p_sd_bus_message_unref!(reply) }
        _ = api.p_sd_bus_send!(bus, reply, nil)
        return 1
    }

    /// Sends the error reply `failure` to `call`: 1.
    private func answer(_ call: OpaquePointer, with failure: DBusFailure) -> Int32 {
        failure.name.withCString { name in
            failure.message.withCString { text in
                var error = sd_bus_error(name: name, message: text, _need_free: 0)
                var reply: OpaquePointer?
                guard api.p_sd_bus_message_new_method_error!(call, &reply, &error) >= 0, let reply else {
                    return -ENOMEM
                }
                defer { _ = api.p_sd_bus_message_unref!(reply) }
                _ = api.p_sd_bus_send!(bus, reply, nil)
                return 1
            }
        }
    }
}
