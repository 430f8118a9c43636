import Foundation

/// `NSLog` for any values, as the MobileFirst tutorials call it with a dictionary (`NSLog("%@", challenge)`): each
/// `%@` is the next value's description. Foundation's own `NSLog` takes only `CVarArg` values, which a Swift
/// dictionary is not on Linux. Disfavoured: wherever Foundation's `NSLog` fits (`NSLog("Unknown error")`,
/// `NSLog("%d", count)`), Swift picks Foundation's, so a call is never ambiguous.
@_disfavoredOverload
public func NSLog(_ format: String, _ arguments: Any?...) {
    var remaining = arguments[...]
    var text = ""
    var rest = format[...]
    while let range = rest.range(of: "%@") {
        text += rest[..<range.lowerBound]
        text += remaining.popFirst().map { $0.map { String(describing: $0) } ?? "(null)" } ?? "%@"
        rest = rest[range.upperBound...]
    }
    text += rest
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
