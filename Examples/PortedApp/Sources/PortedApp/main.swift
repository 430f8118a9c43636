// What an app ported from MobileFirst and KAAZING imports: each framework's import changed to Gatehouse's.
import GatehouseClient
import GatehouseClientWebSocket
import GatehouseKaazing
import GatehouseMobileFirst

let configuration = ClientConfiguration(serverURL: URL(string: "https://gatehouse.example")!, applicationID: "com.example.app")
print("Gatehouse SDK configured for \(configuration.serverURL)")
