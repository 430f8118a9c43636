// MobileFirst's framework brings Foundation with it (its umbrella header imports it), and UIKit on iOS: so does this
// module, so that code written against it (`NSNull`, `NSLog`, `URL`; a challenge handler's `UIAlertController` in a
// file that imports only the framework, as PinCodeSwift's has it) compiles with the one import changed.
@_exported import Foundation
#if os(iOS) || os(tvOS) || os(visionOS)
@_exported import UIKit
#endif
