/// The daemon's check that a client's frames come in an allowed order, before any of them is
/// acted on:
///
/// - only client message types (the high bit of the type clear);
/// - `hello` first, exactly once, with request id 0 allowed for nothing but error frames;
/// - every request (status, item and audit operations) under a request id greater than the
///   previous one, and at most one request in flight;
/// - `promptAnswer` only for the request in flight that has a prompt outstanding;
/// - `cancel` only for the request in flight, or for the last request already answered: a
///   client cannot know whether its cancel crossed the reply on the wire, so a late cancel is
///   accepted and changes nothing (``isLate(cancel:)``).
///
/// A frame refused here is ``ProtocolError/outOfOrder(_:)``: the connection ends with an
/// error frame (`errSecBadReq`), and the frame changed nothing.
public struct ClientSequence: Sendable {
    private var greeted = false
    private var lastRequestID: UInt32 = 0
    private var lastAnswered: UInt32?
    /// The request being served, if any.
    public private(set) var inFlight: UInt32?
    /// The request in flight has a prompt waiting for an answer.
    public private(set) var promptOutstanding = false

    /// A fresh connection's sequence.
    public init() {}

    /// Checks `frame` against the order so far and records it.
    /// - Throws: ``ProtocolError/outOfOrder(_:)``.
    public mutating func accept(_ frame: Frame) throws(ProtocolError) {
        guard frame.type.isFromClient else { throw .outOfOrder("a client may not send \(frame.type)") }
        switch frame.type {
        case .hello:
            guard !greeted else { throw .outOfOrder("hello was already sent") }
            guard frame.requestID > lastRequestID else { throw .outOfOrder("request id must be above 0") }
            greeted = true
            lastRequestID = frame.requestID
        case .promptAnswer:
            guard greeted, frame.requestID == inFlight, promptOutstanding else {
                throw .outOfOrder("no prompt is waiting for request \(frame.requestID)")
            }
            promptOutstanding = false
        case .cancel:
            guard greeted, frame.requestID == inFlight || (inFlight == nil && frame.requestID == lastAnswered) else {
                throw .outOfOrder("request \(frame.requestID) is not in flight")
            }
        default:
            guard greeted else { throw .outOfOrder("the first frame must be hello") }
            guard inFlight == nil else { throw .outOfOrder("request \(inFlight!) is still in flight") }
            guard frame.requestID > lastRequestID else {
                throw .outOfOrder("request id \(frame.requestID) does not follow \(lastRequestID)")
            }
            lastRequestID = frame.requestID
            inFlight = frame.requestID
        }
    }

    /// True when `cancel` (an accepted cancel frame) names a request already answered: it
    /// crossed the reply and is to be ignored.
    public func isLate(cancel frame: Frame) -> Bool { frame.requestID != inFlight }

    /// Records that the daemon sent a prompt for the request in flight.
    public mutating func prompted() { promptOutstanding = inFlight != nil }

    /// Records that the request in flight was answered (its final reply was sent).
    public mutating func finished() {
        if let inFlight { lastAnswered = inFlight }
        inFlight = nil
        promptOutstanding = false
    }
}
