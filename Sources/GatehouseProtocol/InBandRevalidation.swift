/// The text frames of a gateway's in-band revalidation of a WebSocket: the gateway sends ``challengePrefix`` and
/// the realm's `WWW-Authenticate` value; the client answers ``answerPrefix`` and an `Authorization` value. The
/// leading U+0001 keeps them apart from application text. Shared by the gateway and the SDK's WebSocket clients.
public enum InBandRevalidation {
    /// What every frame of the gateway's own starts with.
    public static let reservedPrefix = "\u{1}gatehouse-"
    /// The gateway's in-band challenge: this prefix, then the realm's `WWW-Authenticate` value.
    public static let challengePrefix = "\u{1}gatehouse-challenge "
    /// The client's answer: this prefix, then an `Authorization` value.
    public static let answerPrefix = "\u{1}gatehouse-authorization "

    /// The challenge carried by `text`, if it is an in-band challenge frame.
    public static func challenge(in text: String) -> String? {
        text.hasPrefix(challengePrefix) ? String(text.dropFirst(challengePrefix.count)) : nil
    }
}
