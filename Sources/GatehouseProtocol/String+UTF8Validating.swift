extension String {
    /// The text of `bytes` if they are well-formed UTF-8, or `nil`: what `String(validating:as: UTF8.self)` does, which
    /// needs iOS 18 and macOS 15 (the SDK's floor is iOS 16 and macOS 13).
    ///
    /// Decoding replaces every ill-formed sequence with U+FFFD, whose bytes differ from the sequence replaced, so the
    /// bytes were well formed exactly when the decoded text's UTF-8 is the bytes themselves.
    package init?<Bytes: Collection>(utf8Validating bytes: Bytes) where Bytes.Element == UInt8 {
        let decoded = String(decoding: bytes, as: UTF8.self)
        guard decoded.utf8.elementsEqual(bytes) else { return nil }
        self = decoded
    }
}
