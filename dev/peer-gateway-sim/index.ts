/**
 * peer-gateway-sim: simulated ClusterLink peer gateways for tests, the bench and the demo. Each
 * gateway is an HTTPS port on loopback that verifies the client certificate against the fabric
 * CA and answers `GET /healthz` with the `ClusterLinkPeerLabels` header (reference B.5); it can
 * be told to fail, hang, go silent or refuse, in process or through the control listener. It
 * does not forward data-plane traffic, and it is not imported by production code.
 *
 *   const fleet = await PeerGatewayFleet.start({ peers: [{ name: "east", labels: { region: "eu" } }] });
 *   await kube.create(PEERS, { metadata: { name: "east", namespace }, spec: fleet.peerSpec("east") });
 *   // clusterlink-peer-health with CL_PEER_TLS_DIR=fleet.identityDir
 *   fleet.gateway("east").setMode({ mode: "silent" });
 *   await fleet.close();
 */
export {
  gatewayModeSchema,
  LABELS_HEADER,
  PeerGateway,
  type GatewayCounters,
  type GatewayIdentity,
  type GatewayMode,
  type GatewayModeInput,
  type PeerGatewayOptions,
} from "./server.js";
export {
  createFabric,
  PeerGatewayFleet,
  readGatewayIdentity,
  ServedGateways,
  type Fabric,
  type PeerGatewayFleetOptions,
  type ServedGatewaysOptions,
  type SimulatedPeer,
} from "./fleet.js";
