// A GPU cluster from TypeScript with gpuplane's components: the same components, args and checks as a
// Python program's. A component that belongs to a cluster names it (its resource name) and depends on it,
// so the provider has made the cluster before it.
import * as pulumi from "@pulumi/pulumi";
import * as gpuplane from "@pulumi/gpuplane";

const config = new pulumi.Config();

const cluster = new gpuplane.Cluster("eks", {
    subnetIds: config.requireObject<string[]>("subnetIds"),
    publicAccessCidrs: ["198.51.100.0/24"],
});

const system = new gpuplane.NodeGroup("eks-system", {
    cluster: "eks",
    name: "system",
    instanceTypes: ["t3.large"],
}, { dependsOn: [cluster] });

const gpu = new gpuplane.NodeGroup("eks-gpu", {
    cluster: "eks",
    name: "gpu",
    kind: "gpu",
    instanceTypes: ["g6.xlarge"],
    minSize: 0,
    maxSize: 2,
}, { dependsOn: [cluster] });

// The device plugin, GPU feature discovery and the DCGM exporter, for the GPU groups made so far.
new gpuplane.GpuEnablement("eks-gpu-stack", {
    cluster: "eks",
    dcgmExporter: true,
}, { dependsOn: [system, gpu] });

// Starts GPU nodes from zero for pending GPU pods.
new gpuplane.ClusterAutoscaler("eks-autoscaler", {
    cluster: "eks",
}, { dependsOn: [system, gpu] });

export const kubeconfig = cluster.kubeconfig;
export const gpuNodeGroup = gpu.nodeGroupName;
