import Foundation
import GatehouseClient
import GatehouseClientWebSocket

extension KGWebSocket {
    /// Opens the connection in the background and returns at once; ``didOpen`` (or ``didReceiveError`` and
    /// ``didClose``) tells how it went. A second call is an error (reported to ``didReceiveError``).
    open func connect() {
        let setup: (url: URL, protocols: [String], handler: KGChallengeHandler?, timeout: Int32)? = withState { state in
            guard !state.started else { return nil }
            state.started = true
            state.readyState = KGReadyState_CONNECTING
            return (state.location, state.protocols, state.handler, state.timeout)
        }
        guard let setup else {
            report(GatewayClientError.transport("connect() was called on a WebSocket that was already connected"))
            return
        }
        if KGTracerDebug { kaazingLogger.debug("connecting", metadata: ["url": "\(setup.url)"]) }
        let bridge = setup.handler.map { KGChallengeHandlerBridge(handler: $0, queue: challenges) }
        var configuration = GatewayWebSocketConfiguration()
        if setup.timeout > 0 {
            configuration.connectTimeout = .milliseconds(Int64(setup.timeout))
            configuration.handshakeTimeout = .milliseconds(Int64(setup.timeout))
        }
        let handshakeTimeout = configuration.handshakeTimeout
        Task.detached { [self] in
            let session: GatewayWebSocketClient.InBandHandler = { messages, outbound, opened in
                try await self.run(messages: messages, outbound: outbound, selectedProtocol: opened.selectedProtocol)
            }
            do {
                let close: GatewayWebSocketCloseFrame?
                do {
                    close = try await GatewayWebSocketClient.connectInBand(
                        url: setup.url.absoluteString, challengeHandler: bridge, protocols: setup.protocols, maxAttempts: Self.maximumChallenges,
                        handshakeTimeout: handshakeTimeout, configuration: configuration, logger: kaazingLogger, handler: session
                    )
                } catch let error as GatewayClientError where error.code == .webSocketBlocked {
                    // As KAAZING's clients do: a WebSocket that cannot get through goes over the emulated transport.
                    if KGTracerDebug { kaazingLogger.debug("falling back to the emulated transport", metadata: ["status": "\(error.status ?? 0)"]) }
                    close = try await GatewayWebSocketClient.connectEmulated(
                        url: setup.url.absoluteString, challengeHandler: bridge, protocols: setup.protocols, maxAttempts: Self.maximumChallenges,
                        configuration: configuration, logger: kaazingLogger, handler: session
                    )
                }
                finish(code: Int(close?.code ?? 1005), reason: close?.reason, wasClean: close != nil)
            } catch {
                report(error)
                finish(code: 1006, reason: "\(error)", wasClean: false)
            }
        }
    }

    /// The open connection: the application's sends and close written in the order they were made, the gateway's
    /// messages delivered, until either side closes.
    private func run(messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>, outbound: GatewayWebSocketWriter,
                     selectedProtocol: String?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            let (sends, continuation) = AsyncStream<Outbound>.makeStream()
            group.addTask {
                for await item in sends {
                    switch item {
                    case .message(let message):
                        do { try await outbound.write(message) } catch { self.report(error) }
                    case .close(let code, let reason):
                        try? await outbound.close(code: code, reason: reason)
                    }
                }
            }
            opened(continuation, selectedProtocol: selectedProtocol)
            for try await message in messages { received(message) }
            continuation.finish()
            try await group.waitForAll()
        }
    }

    /// Closes the connection (`1000`), or the connection attempt.
    open func close() {
        close(1000, reason: nil)
    }

    /// Closes the connection with `code` (`1000` or `3000`–`4999`; another code is reported to ``didReceiveError``
    /// and nothing is closed, where KAAZING's raises an exception).
    open func close(_ code: Int) {
        close(code, reason: nil)
    }

    /// Closes the connection with `code` and `reason` (at most 123 bytes of UTF-8; a longer one is reported to
    /// ``didReceiveError`` and nothing is closed). Closing while connecting closes as soon as the connection opens.
    open func close(_ code: Int, reason: String?) {
        guard code == 1000 || (3000...4999).contains(code) else {
            report(GatewayClientError.transport("close code \(code) is neither 1000 nor between 3000 and 4999"))
            return
        }
        guard (reason?.utf8.count ?? 0) <= 123 else {
            report(GatewayClientError.transport("a close reason longer than 123 bytes"))
            return
        }
        withState { state in
            switch state.readyState {
            case KGReadyState_OPEN:
                state.readyState = KGReadyState_CLOSING
                state.outbound?.yield(.close(code: UInt16(code), reason: reason))
                state.outbound?.finish()
            case KGReadyState_CONNECTING:
                state.pendingClose = (UInt16(code), reason)
            default:
                break
            }
        }
    }

    /// Sends `data`: a `String` as a text message, `Data` (or `[UInt8]`) as a binary one. Anything else, or a socket
    /// that is not open, is reported to ``didReceiveError`` (KAAZING's raises an exception).
    open func send(_ data: Any) {
        let message: GatewayWebSocketMessage
        switch data {
        case let text as String: message = .text(text)
        case let bytes as Data: message = .binary(bytes: bytes)
        case let bytes as [UInt8]: message = .binary(bytes: bytes)
        default:
            report(GatewayClientError.transport("send(_:) takes a String or Data, not \(type(of: data))"))
            return
        }
        let sent = withState { state -> Bool in
            guard state.readyState == KGReadyState_OPEN, let outbound = state.outbound else { return false }
            outbound.yield(.message(message))
            return true
        }
        if !sent { report(GatewayClientError.transport("send(_:) on a WebSocket that is not open")) }
    }

    // MARK: Events, delivered on the callbacks queue

    private func opened(_ outbound: AsyncStream<Outbound>.Continuation, selectedProtocol: String?) {
        let pendingClose = withState { state -> (code: UInt16, reason: String?)? in
            state.outbound = outbound
            state.negotiated = selectedProtocol
            state.readyState = KGReadyState_OPEN
            return state.pendingClose
        }
        if KGTracerDebug { kaazingLogger.debug("opened", metadata: ["protocol": "\(selectedProtocol ?? "")"]) }
        callbacks.async { [self] in
            let (block, delegate) = withState { ($0.onOpen, $0.delegate) }
            block?(self)
            delegate?.webSocketDidOpen(self)
        }
        if let pendingClose { close(Int(pendingClose.code), reason: pendingClose.reason) }
    }

    private func received(_ message: GatewayWebSocketMessage) {
        callbacks.async { [self] in
            // A String or Data, as KAAZING's gives an NSString or NSData.
            let data: any Sendable
            switch message {
            case .text(let text): data = text
            case .binary: data = Data(message.binaryBytes ?? [])
            }
            let (block, delegate) = withState { ($0.onMessage, $0.delegate) }
            block?(self, data)
            delegate?.webSocket(self, didReceiveMessage: data)
        }
    }

    private func finish(code: Int, reason: String?, wasClean: Bool) {
        withState { state in
            state.readyState = KGReadyState_CLOSED
            state.outbound?.finish()
            state.outbound = nil
        }
        if KGTracerDebug { kaazingLogger.debug("closed", metadata: ["code": "\(code)", "clean": "\(wasClean)"]) }
        callbacks.async { [self] in
            let (block, delegate) = withState { ($0.onClose, $0.delegate) }
            block?(self, code, reason, wasClean)
            delegate?.webSocket(self, didCloseWithCode: code, reason: reason, wasClean: wasClean)
        }
    }

    func report(_ error: any Error) {
        let nsError = error as NSError
        callbacks.async { [self] in
            let (block, delegate) = withState { ($0.onError, $0.delegate) }
            block?(self, nsError)
            delegate?.webSocket(self, didReceiveError: nsError)
        }
    }
}
