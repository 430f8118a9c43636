// A long file by nature, not split: it is the OpenAPI document itself (YAML data, one block per endpoint), not code.
import GatehouseProtocol
import Yams

/// The OpenAPI 3.1 description of every HTTP endpoint, served at `/openapi.json`. A test checks real answers
/// against it.
public enum OpenAPIDocument {
    /// The document as JSON.
    public static let json: JSON = (try? YAMLDecoder().decode(JSON.self, from: yaml)) ?? .null

    static let yaml = #"""
    openapi: 3.1.0
    info:
      title: Gatehouse
      version: "1.0"
      description: >-
        MobileFirst 8.0 runtime protocol (/mfp/api), adapters' resources and standard OAuth discovery. Every error
        answer is JSON. HEAD is answered wherever GET is (without the body); another method that a documented path
        does not declare is answered 405 with Allow (OPTIONS: 204 with Allow). Requests are authenticated by the protocol itself: a registered client id, a client assertion
        (RS256 JWS signed with the registered key), a bearer token or a confidential client's HTTP Basic; a
        well-formed request that names an unregistered client or carries a signature that does not verify is
        answered 400 (INVALID_CLIENT_ID, INVALID_REQUEST, invalid_grant), 401 or 403 as the operation says.
    paths:
      /health:
        get:
          summary: Liveness
          responses:
            "200": { description: Up, content: { application/json: { schema: { type: object, required: [status], properties: { status: { const: ok } } } } } }
      /ready:
        get:
          summary: Readiness for load balancers (the store answers, the signing keys are loaded)
          responses:
            "200": { description: Ready, content: { application/json: { schema: { $ref: "#/components/schemas/Readiness" } } } }
            "503": { description: Not ready; checks names what is not, content: { application/json: { schema: { $ref: "#/components/schemas/Readiness" } } } }
      /mfp/api/registration/v1/self:
        post:
          summary: Self-registration with signed registration data
          requestBody: { required: true, content: { application/json: { schema: { $ref: "#/components/schemas/RegistrationRequest" } } } }
          responses:
            "201":
              description: Registered; the client id is the last segment of Location
              headers: { Location: { required: true, schema: { type: string } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/ClientID" } } }
            "400": { $ref: "#/components/responses/Error" }
            "403": { $ref: "#/components/responses/Error" }
            "413": { $ref: "#/components/responses/Error" }
            "415": { $ref: "#/components/responses/Error" }
            "429":
              description: Too many registrations from this address (when the policy throttles registration)
              headers: { Retry-After: { required: true, schema: { type: string } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
      /mfp/api/registration/v1/self/{clientId}:
        parameters: [{ name: clientId, in: path, required: true, schema: { type: string, minLength: 1 } }]
        put:
          summary: Update a registration, signed with the registered key
          requestBody: { required: true, content: { application/json: { schema: { $ref: "#/components/schemas/RegistrationRequest" } } } }
          responses:
            "200":
              description: Updated
              headers: { Location: { required: true, schema: { type: string } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/ClientID" } } }
            "400": { $ref: "#/components/responses/Error" }
            "403": { $ref: "#/components/responses/Error" }
            "413": { $ref: "#/components/responses/Error" }
            "415": { $ref: "#/components/responses/Error" }
        get:
          summary: Read the own registration (client assertion in the query)
          parameters:
            - { name: client_assertion, in: query, required: true, schema: { $ref: "#/components/schemas/CompactJWS" } }
            - { name: client_assertion_type, in: query, required: true, schema: { $ref: "#/components/schemas/ClientAssertionType" } }
          responses:
            "200":
              description: The registration
              content:
                application/json:
                  schema:
                    type: object
                    required: [registration]
                    properties:
                      registration:
                        type: object
                        required: [device, application, attributes]
                        properties: { device: { type: object, required: [id] }, application: { type: object, required: [id, clientPlatform] }, attributes: { type: object } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/Error" }
            "403": { $ref: "#/components/responses/Error" }
      /mfp/api/preauth/v1/preauthorize:
        post:
          summary: One round of security checks
          requestBody: { required: true, content: { application/json: { schema: { $ref: "#/components/schemas/PreauthorizeRequest" } } } }
          responses:
            "200":
              description: Every check succeeded
              headers: { Cache-Control: { required: true, schema: { const: no-store } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/PreauthorizeResponse" } } }
            "401":
              description: Challenges to answer
              headers: { WWW-Authenticate: { required: true, schema: { const: MFP-Challenge } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/PreauthorizeResponse" } } }
            "403":
              description: Failures of checks (PreauthorizeResponse), or an application the policy does not register (Error)
              content:
                application/json:
                  schema:
                    type: object
                    anyOf: [{ $ref: "#/components/schemas/PreauthorizeResponse" }, { $ref: "#/components/schemas/Error" }]
            "400": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Conflict" }
            "413": { $ref: "#/components/responses/Error" }
            "415": { $ref: "#/components/responses/Error" }
      /mfp/api/az/v1/authorization:
        get:
          summary: Authorization code for a pre-authorized scope
          parameters:
            - { name: response_type, in: query, required: true, schema: { const: code } }
            - { name: client_id, in: query, required: true, schema: { type: string, minLength: 1 } }
            - { name: redirect_uri, in: query, required: true, schema: { type: string, minLength: 1 }, description: "<scheme>://mfpredirecturi (native) or this server's /mfp/api/az/v1/authorization/redirect/<clientId> (web)" }
            - { name: scope, in: query, schema: { type: string } }
          responses:
            "302":
              description: Redirect to redirect_uri with ?code=
              headers: { Location: { required: true, schema: { type: string } } }
            "400":
              description: A wrong response_type (OAuth error), or a missing or unknown client, redirect_uri or scope (MobileFirst error)
              content: { application/json: { schema: { $ref: "#/components/schemas/AnyError" } } }
            "403": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Conflict" }
      /mfp/api/az/v1/authorization/redirect/{clientId}:
        parameters: [{ name: clientId, in: path, required: true, schema: { type: string, minLength: 1 } }]
        get:
          summary: The web SDK's redirect target
          parameters:
            - { name: code, in: query, required: true, schema: { type: string, minLength: 1 } }
            - { name: error, in: query, schema: { type: string } }
            - { name: errorMsg, in: query, schema: { type: string } }
          responses:
            "200":
              description: The code
              headers: { Cache-Control: { required: true, schema: { const: no-store } } }
              content: { application/json: { schema: { type: object, required: [code], properties: { code: { type: string } } } } }
            "400": { $ref: "#/components/responses/OAuthError" }
      /mfp/api/az/v1/token:
        post:
          summary: Token for a code (client assertion) or for a confidential client (HTTP Basic)
          security: [{ clientBasic: [] }, {}]
          requestBody:
            required: true
            content:
              application/x-www-form-urlencoded:
                schema:
                  type: object
                  required: [grant_type]
                  properties:
                    grant_type: { enum: [authorization_code, client_credentials] }
                    code: { type: string }
                    redirect_uri: { type: string, description: "authorization_code: the one the code was issued for" }
                    client_id: { type: string }
                    client_assertion: { type: string }
                    client_assertion_type: { type: string }
                    scope: { type: string, description: "client_credentials: the scope asked for (within the client's allowedScope)" }
                  anyOf:
                    - description: "authorization_code: the code, its redirect_uri and the client's assertion (aud the token endpoint, jti the code)"
                      required: [code, redirect_uri, client_assertion, client_assertion_type]
                      properties:
                        grant_type: { const: authorization_code }
                        code: { type: string, minLength: 1 }
                        client_assertion: { $ref: "#/components/schemas/CompactJWS" }
                        client_assertion_type: { $ref: "#/components/schemas/ClientAssertionType" }
                    - description: "client_credentials: the confidential client authenticates by HTTP Basic; other fields are ignored"
                      properties: { grant_type: { const: client_credentials } }
          responses:
            "200":
              description: The token
              headers: { Cache-Control: { required: true, schema: { const: no-store } } }
              content: { application/json: { schema: { $ref: "#/components/schemas/TokenResponse" } } }
            "400": { $ref: "#/components/responses/OAuthError" }
            "401": { $ref: "#/components/responses/OAuthError" }
            "413": { $ref: "#/components/responses/OAuthError" }
            "415": { $ref: "#/components/responses/OAuthError" }
      /mfp/api/az/v1/introspection:
        post:
          summary: What a token grants (confidential clients with authorization.introspect; Bearer or Basic)
          security: [{ clientBasic: [] }, { bearer: [authorization.introspect] }]
          requestBody: { required: true, content: { application/x-www-form-urlencoded: { schema: { type: object, required: [token], properties: { token: { type: string, minLength: 1 } } } } } }
          responses:
            "200": { description: The token's data, content: { application/json: { schema: { $ref: "#/components/schemas/Introspection" } } } }
            "400": { $ref: "#/components/responses/OAuthError" }
            "401": { $ref: "#/components/responses/OAuthError" }
            "403": { $ref: "#/components/responses/OAuthError" }
            "413": { $ref: "#/components/responses/OAuthError" }
            "415": { $ref: "#/components/responses/OAuthError" }
      /mfp/api/az/v1/revoke:
        post:
          summary: RFC 7009 revocation of a client's own token (HTTP Basic of a confidential client, or a client assertion)
          security: [{ clientBasic: [] }, {}]
          requestBody:
            required: true
            content:
              application/x-www-form-urlencoded:
                schema:
                  type: object
                  required: [token]
                  description: >-
                    A confidential client authenticates by HTTP Basic (the assertion fields are then ignored); a mobile
                    client by client_assertion (a CompactJWS) with client_assertion_type
                    urn:ietf:params:oauth:client-assertion-type:jwt-bearer (400 without the type).
                  properties:
                    token: { type: string, minLength: 1 }
                    client_assertion: { type: string }
                    client_assertion_type: { type: string }
          responses:
            "200": { description: Revoked (or unknown), content: { application/json: { schema: { type: object } } } }
            "400": { $ref: "#/components/responses/OAuthError" }
            "401": { $ref: "#/components/responses/OAuthError" }
            "413": { $ref: "#/components/responses/OAuthError" }
            "415": { $ref: "#/components/responses/OAuthError" }
      /mfp/api/az/v1/jwks:
        get:
          responses:
            "200": { description: The token keys, content: { application/json: { schema: { $ref: "#/components/schemas/JWKS" } } } }
      /mfp/api/preauth/v1/logout:
        post:
          summary: Log the client out of one security check
          requestBody:
            required: true
            content:
              application/x-www-form-urlencoded:
                schema:
                  type: object
                  required: [security_check, client_assertion, client_assertion_type]
                  properties:
                    security_check: { type: string, minLength: 1 }
                    client_assertion: { $ref: "#/components/schemas/CompactJWS" }
                    client_assertion_type: { $ref: "#/components/schemas/ClientAssertionType" }
          responses:
            "200": { description: Logged out, content: { application/json: { schema: { type: object } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/Error" }
            "403": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Conflict" }
            "413": { $ref: "#/components/responses/Error" }
            "415": { $ref: "#/components/responses/Error" }
      /mfp/api/preauth/v1/heartbeat:
        post:
          summary: Record the client's activity
          requestBody:
            required: true
            content:
              application/x-www-form-urlencoded:
                schema:
                  type: object
                  required: [client_assertion, client_assertion_type]
                  properties:
                    client_assertion: { $ref: "#/components/schemas/CompactJWS" }
                    client_assertion_type: { $ref: "#/components/schemas/ClientAssertionType" }
          responses:
            "200": { description: Recorded, content: { application/json: { schema: { type: object } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Conflict" }
            "413": { $ref: "#/components/responses/Error" }
            "415": { $ref: "#/components/responses/Error" }
      /mfp/api/loguploader:
        post:
          summary: Client logs and analytics from MobileFirst SDKs (any media type, up to 1 MiB), read and discarded
          requestBody: { content: { "*/*": { schema: {} } } }
          responses:
            "200": { description: Received, content: { application/json: { schema: { type: object } } } }
            "400": { $ref: "#/components/responses/Error" }
            "413": { $ref: "#/components/responses/Error" }
      /mfp/api/adapters/ResourceAdapter/balance:
        get:
          summary: The demo bank balance, scope accessRestricted
          security: [{ bearer: [accessRestricted] }]
          responses:
            "200": { description: The balance, content: { text/plain: { schema: { type: string } } } }
            "401": { $ref: "#/components/responses/Bearer" }
            "403": { $ref: "#/components/responses/Bearer" }
      /mfp/api/adapters/ResourceAdapter/unprotected:
        get:
          responses:
            "200": { description: Open, content: { text/plain: { schema: { type: string } } } }
      /admin/v1/registrations:
        get:
          summary: "Admin: registrations, searched by application, device or user, paged by client id (scope gatehouse.admin.read or gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          parameters:
            - { name: application, in: query, description: Application id, schema: { type: string } }
            - { name: device, in: query, description: Device id, schema: { type: string } }
            - { name: user, in: query, description: The client's active user, schema: { type: string } }
            - { name: after, in: query, description: The cursor (next) of the previous page, schema: { type: string } }
            - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 1000, default: 100 } }
          responses:
            "200":
              description: A page; next is present when more may follow
              content: { application/json: { schema: { type: object, required: [registrations], properties: { registrations: { type: array, items: { $ref: "#/components/schemas/AdminRegistration" } }, next: { type: string } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /admin/v1/registrations/{clientId}:
        parameters: [{ name: clientId, in: path, required: true, schema: { type: string, minLength: 1 } }]
        get:
          summary: "Admin: one client, with the state of each of its application's checks (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          responses:
            "200": { description: The client, content: { application/json: { schema: { $ref: "#/components/schemas/AdminClient" } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
        delete:
          summary: "Admin: delete a registration and its state, revoking its tokens (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200": { description: Deleted, content: { application/json: { schema: { type: object, required: [deleted], properties: { deleted: { type: string } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
      /admin/v1/registrations/{clientId}/revoke:
        parameters: [{ name: clientId, in: path, required: true, schema: { type: string, minLength: 1 } }]
        post:
          summary: "Admin: revoke every token the client's checks granted so far (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200": { description: Revoked, content: { application/json: { schema: { type: object, required: [revoked], properties: { revoked: { type: string } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
      /admin/v1/registrations/{clientId}/checks/{check}/reset:
        parameters:
          - { name: clientId, in: path, required: true, schema: { type: string, minLength: 1 } }
          - { name: check, in: path, required: true, schema: { type: string, minLength: 1 } }
        post:
          summary: "Admin: reset (unblock) one check of a client: its state starts anew, the tokens it granted stop holding (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200": { description: The check's new state, content: { application/json: { schema: { $ref: "#/components/schemas/AdminCheckState" } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Conflict" }
      /admin/v1/accounts:
        get:
          summary: "Admin: accounts locked now by the per-account lockout (user:<name>, client:<id>) (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          parameters: [{ name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 1000, default: 100 } }]
          responses:
            "200":
              description: Locked accounts
              content: { application/json: { schema: { type: object, required: [accounts], properties: { accounts: { type: array, items: { type: object, required: [account, failures, lockedUntil, lockouts], properties: { account: { type: string }, failures: { type: integer }, lockedUntil: { type: integer }, lockouts: { type: integer } } } } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /admin/v1/accounts/{account}:
        parameters: [{ name: account, in: path, required: true, schema: { type: string, minLength: 1 } }]
        delete:
          summary: "Admin: unlock an account (forget its failed logins) (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200": { description: Unlocked, content: { application/json: { schema: { type: object, required: [unlocked], properties: { unlocked: { type: string } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
      /admin/v1/keys:
        get:
          summary: "Admin: the token-signing keys, oldest first, never their private parts (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          responses:
            "200":
              description: The keys
              content: { application/json: { schema: { type: object, required: [keys], properties: { keys: { type: array, items: { type: object, required: [kid, algorithm, createdAt, retiredAt, current], properties: { kid: { type: string }, algorithm: { type: string }, createdAt: { type: integer }, retiredAt: { type: [integer, "null"] }, current: { type: boolean } } } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
        post:
          summary: "Admin: rotate: a new key becomes current on every node (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "201": { description: The new key, content: { application/json: { schema: { type: object, required: [kid], properties: { kid: { type: string } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /admin/v1/keys/{kid}/retire:
        parameters: [{ name: kid, in: path, required: true, schema: { type: string, minLength: 1 } }]
        post:
          summary: "Admin: retire a key: it leaves the JWKS and its tokens stop verifying; the current key cannot be retired (409) (scope gatehouse.admin)"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200": { description: Retired, content: { application/json: { schema: { type: object, required: [retired], properties: { retired: { type: string } } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "404": { $ref: "#/components/responses/Error" }
            "409": { $ref: "#/components/responses/Error" }
      /admin/v1/policy:
        get:
          summary: "Admin: the policy in force, without secrets (no check properties beyond attempts and durations, no hashes) (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          responses:
            "200":
              description: The policy
              content: { application/json: { schema: { type: object, required: [applications, confidentialClients, accountLockout, users], properties: { applications: { type: array, items: { type: object, required: [id, platform, scopeElementMapping, securityChecks] } }, confidentialClients: { type: array }, accountLockout: { type: object }, users: { type: array, items: { type: string } }, registrationThrottle: { type: object } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
        put:
          summary: "Admin: apply a new policy (YAML) live: checked as a start would check it, stored as the next version, in force at once on this node and within the poll interval on every node sharing the store; nothing changes when it has an error (write scope)"
          security: [{ bearer: [gatehouse.admin] }]
          requestBody: { required: true, content: { application/yaml: { schema: { type: string } }, text/plain: { schema: { type: string } } } }
          responses:
            "200":
              description: Applied
              content: { application/json: { schema: { type: object, required: [applied, version, warnings], properties: { applied: { type: boolean }, version: { type: integer }, warnings: { type: array, items: { type: string } } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "409": { $ref: "#/components/responses/Error" }
            "413": { $ref: "#/components/responses/Error" }
            "422":
              description: Not applied; the problem by file and key (INVALID_POLICY)
              content: { application/json: { schema: { type: object, required: [errorCode, errorMsg, errors], properties: { errorCode: { type: string }, errorMsg: { type: string }, errors: { type: array, items: { type: object, required: [file, key, problem], properties: { file: { type: string }, key: { type: string }, problem: { type: string } } } } } } } }
      /admin/v1/policy/source:
        get:
          summary: "Admin: the YAML source of the policy in force and its version, for editing; it holds what the policy holds (hashes, check properties), so the write scope only, and the read is audited"
          security: [{ bearer: [gatehouse.admin] }]
          responses:
            "200":
              description: The source
              content: { application/json: { schema: { type: object, required: [version, origin, yaml], properties: { version: { type: integer }, origin: { type: string }, yaml: { type: string } } } } }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /admin/v1/policy/validate:
        post:
          summary: "Admin: check a new policy (YAML) as a start would, changing nothing: the problem by file and key, and the warnings (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          requestBody: { required: true, content: { application/yaml: { schema: { type: string } }, text/plain: { schema: { type: string } } } }
          responses:
            "200":
              description: The verdict
              content: { application/json: { schema: { type: object, required: [valid, errors, warnings], properties: { valid: { type: boolean }, errors: { type: array, items: { type: object, required: [file, key, problem], properties: { file: { type: string }, key: { type: string }, problem: { type: string } } } }, warnings: { type: array, items: { type: string } } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
            "413": { $ref: "#/components/responses/Error" }
      /admin/v1/audit:
        get:
          summary: "Admin: the audit log, oldest first, paged by event id (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          parameters:
            - { name: after, in: query, description: Events after this id (the next of the previous page), schema: { type: integer, minimum: 0 } }
            - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 1000, default: 100 } }
          responses:
            "200":
              description: A page; next is present when more may follow
              content: { application/json: { schema: { type: object, required: [events], properties: { events: { type: array, items: { $ref: "#/components/schemas/AuditEvent" } }, next: { type: integer } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /admin/v1/activity:
        get:
          summary: "Admin: the audit log counted per time bucket and event kind, from sinceMs to now, every bucket listed (empty ones too), oldest first, with the totals per kind: the console's chart (read scope)"
          security: [{ bearer: [gatehouse.admin.read] }, { bearer: [gatehouse.admin] }]
          parameters:
            - { name: sinceMs, in: query, description: "The first bucket's start, epoch ms, not in the future (default: an hour ago)", schema: { type: integer, minimum: 0 } }
            - { name: bucketSec, in: query, description: "The width of a bucket, seconds; at most 1440 buckets in all", schema: { type: integer, minimum: 1, maximum: 86400, default: 60 } }
          responses:
            "200":
              description: The counts
              content: { application/json: { schema: { type: object, required: [sinceMs, untilMs, bucketSec, buckets, totals], properties: { sinceMs: { type: integer }, untilMs: { type: integer, description: The end of the last bucket (exclusive) }, bucketSec: { type: integer }, buckets: { type: array, items: { type: object, required: [startMs, counts], properties: { startMs: { type: integer }, counts: { type: object, description: "Events of each kind in the bucket (registration, check.failure, token.issued, ...)", additionalProperties: { type: integer } } } } }, totals: { type: object, additionalProperties: { type: integer } } } } } }
            "400": { $ref: "#/components/responses/Error" }
            "401": { $ref: "#/components/responses/AdminRefused" }
            "403": { $ref: "#/components/responses/AdminRefused" }
      /.well-known/jwks.json:
        get:
          responses:
            "200": { description: The token keys, content: { application/json: { schema: { $ref: "#/components/schemas/JWKS" } } } }
      /.well-known/oauth-authorization-server:
        get:
          responses:
            "200":
              description: RFC 8414 metadata
              content: { application/json: { schema: { type: object, required: [issuer, token_endpoint, jwks_uri], properties: { issuer: { type: string }, token_endpoint: { type: string }, jwks_uri: { type: string } } } } }
      /metrics:
        get:
          summary: "Prometheus metrics (text format 0.0.4): requests by route and status with latency histograms; rounds, challenges, successes, failures and blocks per check; tokens issued, introspected, revoked; registrations"
          responses:
            "200": { description: The metrics, content: { text/plain: { schema: { type: string } } } }
      /openapi.json:
        get:
          responses:
            "200": { description: This document, content: { application/json: { schema: { type: object, required: [openapi, paths] } } } }
    components:
      securitySchemes:
        bearer: { type: http, scheme: bearer, bearerFormat: JWT }
        clientBasic: { type: http, scheme: basic, description: A confidential client's id and secret }
        clientCredentials:
          type: oauth2
          description: Confidential clients (HTTP Basic at the token endpoint)
          flows: { clientCredentials: { tokenUrl: /mfp/api/az/v1/token, scopes: { authorization.introspect: Call the introspection endpoint, gatehouse.admin: The whole admin API, gatehouse.admin.read: The admin API's reads } } }
      responses:
        Error:
          description: A MobileFirst error
          content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
        Conflict:
          description: The client's state changed meanwhile (another node); send the request again
          headers: { MFP-Conflict: { required: true, schema: { const: "true" } } }
          content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
        OAuthError:
          description: An OAuth error (RFC 6749 §5.2)
          content: { application/json: { schema: { $ref: "#/components/schemas/OAuthError" } } }
        Bearer:
          description: A refused token (RFC 6750)
          headers: { WWW-Authenticate: { required: true, schema: { type: string } } }
          content: { application/json: { schema: { $ref: "#/components/schemas/OAuthError" } } }
        AdminRefused:
          description: No valid bearer token (401), or not a confidential client's token with the admin scope (403)
          headers: { WWW-Authenticate: { required: true, schema: { type: string } } }
          content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
      schemas:
        AdminRegistration:
          type: object
          required: [clientId, application, device, user, createdAt, updatedAt]
          properties:
            clientId: { type: string }
            application: { type: object, required: [id, clientPlatform], properties: { id: { type: string }, clientPlatform: { type: string }, version: { type: [string, "null"] } } }
            device: { type: object, required: [id], properties: { id: { type: string }, hardware: { type: [string, "null"] }, platform: { type: [string, "null"] }, deviceDisplayName: { type: [string, "null"] } } }
            user: { type: [string, "null"] }
            createdAt: { type: integer }
            updatedAt: { type: integer }
        AdminCheckState:
          type: object
          required: [check, state, expiresAt]
          properties:
            check: { type: string }
            state: { type: string, description: "attempting, success, blocked, expired (active for checks without attempts)" }
            expiresAt: { type: integer, description: Epoch ms; 0 when expired }
            maxAttempts: { type: integer }
            remainingAttempts: { type: integer }
        AdminClient:
          allOf:
            - { $ref: "#/components/schemas/AdminRegistration" }
            - { type: object, required: [checks], properties: { checks: { type: array, items: { $ref: "#/components/schemas/AdminCheckState" } } } }
        AuditEvent:
          type: object
          required: [id, time, event]
          properties:
            id: { type: integer }
            time: { type: integer, description: Epoch ms }
            event: { type: string, description: "registration, check.success, check.failure, check.blocked, token.issued, token.revoked, account.locked, admin.*" }
            clientId: { type: string }
            application: { type: string }
            user: { type: string }
            check: { type: string }
            address: { type: string }
            node: { type: string }
            actor: { type: string }
            detail: { type: string }
        Error:
          type: object
          required: [errorCode, errorMsg]
          properties: { errorCode: { type: string }, errorMsg: { type: string } }
        OAuthError:
          type: object
          required: [error]
          properties: { error: { type: string }, error_description: { type: string } }
        AnyError:
          type: object
          properties: { errorCode: { type: string }, errorMsg: { type: string }, error: { type: string }, error_description: { type: string } }
          anyOf: [{ required: [errorCode, errorMsg] }, { required: [error] }]
        Readiness:
          type: object
          required: [status, checks]
          properties:
            status: { enum: [ready, not ready] }
            checks: { type: object, additionalProperties: { type: string } }
        ClientID:
          type: object
          required: [clientId]
          properties: { clientId: { type: string } }
        CompactJWS:
          type: string
          minLength: 1
          description: A JWS in compact form (header.payload.signature), RS256, signed with the client's registered key
        ClientAssertionType:
          const: urn:ietf:params:oauth:client-assertion-type:jwt-bearer
        JWS:
          type: object
          required: [header, payload, signature]
          properties:
            header: { type: string, minLength: 1, description: base64url of the JSON header (alg RS256, the client's jwk) }
            payload: { type: string, minLength: 1, description: base64url of the JSON payload }
            signature: { type: string, minLength: 1, description: base64url of the RS256 signature }
        RegistrationRequest:
          type: object
          required: [signedRegistrationData]
          properties: { signedRegistrationData: { $ref: "#/components/schemas/JWS" } }
        PreauthorizeRequest:
          type: object
          required: [client_id]
          properties:
            client_id: { type: string, minLength: 1 }
            scope: { type: [string, "null"] }
            challengeResponse: { type: [object, "null"], additionalProperties: { type: [object, "null"] } }
        PreauthorizeResponse:
          type: object
          properties:
            successes:
              type: object
              required: [clockSynchronization]
              properties: { clockSynchronization: { type: object, required: [serverTimeStamp], properties: { serverTimeStamp: { type: integer } } } }
            challenges: { type: object, additionalProperties: { type: [object, "null"] } }
            failures: { type: object, additionalProperties: { type: [object, "null"] } }
        TokenResponse:
          type: object
          required: [token_type, expires_in, access_token, scope]
          properties:
            token_type: { const: Bearer }
            expires_in: { type: integer }
            access_token: { type: string }
            scope: { type: string }
        Introspection:
          type: object
          required: [active]
          properties:
            active: { type: boolean }
            scope: { type: string }
            client_id: { type: string }
            exp: { type: integer, description: epoch milliseconds }
            iat: { type: integer, description: epoch milliseconds }
            sub: { type: string }
            iss: { type: string }
            jti: { type: string }
            token_type: { const: Bearer }
            username: { type: string }
            mfp-application: { type: [object, "null"] }
            mfp-device: { type: [object, "null"] }
            mfp-user: { type: [object, "null"] }
            mfp-checks: { type: object }
        JWKS:
          type: object
          required: [keys]
          properties: { keys: { type: array, items: { type: object, required: [kty, kid], properties: { kty: { type: string }, kid: { type: string } } } } }
    """#
}
