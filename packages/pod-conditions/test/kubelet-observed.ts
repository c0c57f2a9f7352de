/**
 * Pods and Events exactly as the real kubelet wrote them (kubelet v1.35.4, containerd 1.6.20, runc,
 * the harness's node). The crash loop, image pull, readiness probe and gate pods are the ones
 * test/integration/node/pod-conditions-node.test.ts creates; the other crash shapes (a crash after 4 s,
 * exit 0 under Always, a command that does not exist, a crashing init container, OnFailure) were
 * run the same way. Status objects are copied verbatim from a watch of each pod; the spec is the
 * one the pod was created with, plus the node the scheduler chose.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodEvent } from '../src/index.js';

export const observed = {
  "creating": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "waiting": {
              "reason": "ContainerCreating"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "crashExited0": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.16",
      "podIPs": [
        {
          "ip": "10.88.5.16"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:53Z",
              "finishedAt": "2026-12-01T11:40:53Z",
              "containerID": "containerd://896e83da46f4d17de5f6d33b7db7132784bd9da168de10aaf920a64742dc1b6c"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://896e83da46f4d17de5f6d33b7db7132784bd9da168de10aaf920a64742dc1b6c",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "crashExited1": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.16",
      "podIPs": [
        {
          "ip": "10.88.5.16"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:54Z",
              "finishedAt": "2026-12-01T11:40:54Z",
              "containerID": "containerd://74e2509ffb7167d87c0d962624aa1db30f0be48584a1c780cc4c409d1ebd751c"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:53Z",
              "finishedAt": "2026-12-01T11:40:53Z",
              "containerID": "containerd://896e83da46f4d17de5f6d33b7db7132784bd9da168de10aaf920a64742dc1b6c"
            }
          },
          "ready": false,
          "restartCount": 1,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://74e2509ffb7167d87c0d962624aa1db30f0be48584a1c780cc4c409d1ebd751c",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "crashBackOff1": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.16",
      "podIPs": [
        {
          "ip": "10.88.5.16"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "waiting": {
              "reason": "CrashLoopBackOff",
              "message": "back-off 10s restarting failed container=crashy pod=crashy_cap(715781cd-7cfe-4bef-823d-36be1e393e3b)"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:54Z",
              "finishedAt": "2026-12-01T11:40:54Z",
              "containerID": "containerd://74e2509ffb7167d87c0d962624aa1db30f0be48584a1c780cc4c409d1ebd751c"
            }
          },
          "ready": false,
          "restartCount": 1,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://74e2509ffb7167d87c0d962624aa1db30f0be48584a1c780cc4c409d1ebd751c",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "crashExited2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.16",
      "podIPs": [
        {
          "ip": "10.88.5.16"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:41:05Z",
              "finishedAt": "2026-12-01T11:41:05Z",
              "containerID": "containerd://b9f6ce52abc48bb64bdb76d3ac5ec36653e27d3124494ea18ab3956ae72a7217"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:54Z",
              "finishedAt": "2026-12-01T11:40:54Z",
              "containerID": "containerd://74e2509ffb7167d87c0d962624aa1db30f0be48584a1c780cc4c409d1ebd751c"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://b9f6ce52abc48bb64bdb76d3ac5ec36653e27d3124494ea18ab3956ae72a7217",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "crashBackOff2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "crashy",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "crashy",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "echo boom; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [crashy]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.16",
      "podIPs": [
        {
          "ip": "10.88.5.16"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "crashy",
          "state": {
            "waiting": {
              "reason": "CrashLoopBackOff",
              "message": "back-off 20s restarting failed container=crashy pod=crashy_cap(715781cd-7cfe-4bef-823d-36be1e393e3b)"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:41:05Z",
              "finishedAt": "2026-12-01T11:41:05Z",
              "containerID": "containerd://b9f6ce52abc48bb64bdb76d3ac5ec36653e27d3124494ea18ab3956ae72a7217"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://b9f6ce52abc48bb64bdb76d3ac5ec36653e27d3124494ea18ab3956ae72a7217",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "onFailureExited2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "onfail",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "OnFailure",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.15",
      "podIPs": [
        {
          "ip": "10.88.5.15"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:41:06Z",
              "finishedAt": "2026-12-01T11:41:06Z",
              "containerID": "containerd://ec17af2e28e2c2b038eda17de236d5ee3b447b45e5882b3f07cf79165242fa48"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:40:54Z",
              "finishedAt": "2026-12-01T11:40:54Z",
              "containerID": "containerd://d0571ae7d19279e3b209c71e9e778e30f82c7ef5eb18269e27a46fc4d8e16dc3"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://ec17af2e28e2c2b038eda17de236d5ee3b447b45e5882b3f07cf79165242fa48",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "onFailureBackOff2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "onfail",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "OnFailure",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.15",
      "podIPs": [
        {
          "ip": "10.88.5.15"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "CrashLoopBackOff",
              "message": "back-off 20s restarting failed container=app pod=onfail_cap(66258445-991e-4534-8ea9-3aa55dcf7104)"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:41:06Z",
              "finishedAt": "2026-12-01T11:41:06Z",
              "containerID": "containerd://ec17af2e28e2c2b038eda17de236d5ee3b447b45e5882b3f07cf79165242fa48"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://ec17af2e28e2c2b038eda17de236d5ee3b447b45e5882b3f07cf79165242fa48",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "errImagePull": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "pull",
      "namespace": "cap"
    },
    "spec": {
      "containers": [
        {
          "name": "app",
          "image": "registry.example/podlife/missing:1",
          "imagePullPolicy": "IfNotPresent"
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.10",
      "podIPs": [
        {
          "ip": "10.88.5.10"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "ErrImagePull",
              "message": "failed to pull and unpack image \"registry.example/podlife/missing:1\": failed to resolve reference \"registry.example/podlife/missing:1\": failed to do request: Head \"http://127.0.0.1:9/v2/podlife/missing/manifests/1?ns=registry.example\": dial tcp 127.0.0.1:9: connect: connection refused"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "registry.example/podlife/missing:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "imagePullBackOff": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "pull",
      "namespace": "cap"
    },
    "spec": {
      "containers": [
        {
          "name": "app",
          "image": "registry.example/podlife/missing:1",
          "imagePullPolicy": "IfNotPresent"
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.10",
      "podIPs": [
        {
          "ip": "10.88.5.10"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "ImagePullBackOff",
              "message": "Back-off pulling image \"registry.example/podlife/missing:1\": ErrImagePull: failed to pull and unpack image \"registry.example/podlife/missing:1\": failed to resolve reference \"registry.example/podlife/missing:1\": failed to do request: Head \"http://127.0.0.1:9/v2/podlife/missing/manifests/1?ns=registry.example\": dial tcp 127.0.0.1:9: connect: connection refused"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "registry.example/podlife/missing:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "errImageNeverPull": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "never",
      "namespace": "cap"
    },
    "spec": {
      "containers": [
        {
          "name": "app",
          "image": "registry.example/podlife/missing:1",
          "imagePullPolicy": "Never"
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:53Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.13",
      "podIPs": [
        {
          "ip": "10.88.5.13"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "ErrImageNeverPull",
              "message": "Container image \"registry.example/podlife/missing:1\" is not present with pull policy of Never"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "registry.example/podlife/missing:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "probeFailing": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "probe",
      "namespace": "cap"
    },
    "spec": {
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sleep",
            "3600"
          ],
          "readinessProbe": {
            "exec": {
              "command": [
                "sh",
                "-c",
                "echo not warm; exit 1"
              ]
            },
            "periodSeconds": 1,
            "failureThreshold": 1
          }
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.12",
      "podIPs": [
        {
          "ip": "10.88.5.12"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "running": {
              "startedAt": "2026-12-01T11:40:53Z"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://a838523e926d90ca431cc3d723e121c9f3958384bc8925f883fbd5c7875943ce",
          "started": true,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "gateMissing": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "gated",
      "namespace": "cap"
    },
    "spec": {
      "readinessGates": [
        {
          "conditionType": "example.com/warm"
        }
      ],
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sleep",
            "3600"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "ReadinessGatesNotReady",
          "message": "corresponding condition of pod readiness gate \"example.com/warm\" does not exist."
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:54Z"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.11",
      "podIPs": [
        {
          "ip": "10.88.5.11"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "running": {
              "startedAt": "2026-12-01T11:40:53Z"
            }
          },
          "lastState": {},
          "ready": true,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://5cabdc04dd53503c96c340fefa1c65c10a869a4f59a9262b27c3cbd06538ea00",
          "started": true,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "succeeded": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "done",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Never",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "sleep 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Succeeded",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:58Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:52Z",
          "reason": "PodCompleted"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:57Z",
          "reason": "PodCompleted"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:57Z",
          "reason": "PodCompleted"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:40:51Z"
        }
      ],
      "hostIP": "10.88.5.1",
      "hostIPs": [
        {
          "ip": "10.88.5.1"
        }
      ],
      "podIP": "10.88.5.14",
      "podIPs": [
        {
          "ip": "10.88.5.14"
        }
      ],
      "startTime": "2026-12-01T11:40:52Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "terminated": {
              "exitCode": 0,
              "reason": "Completed",
              "startedAt": "2026-12-01T11:40:53Z",
              "finishedAt": "2026-12-01T11:40:56Z",
              "containerID": "containerd://5dbc790e4c28db21ad5637dadd29f0b931aa4e6adafdf079740bb55e989ebdfc"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://5dbc790e4c28db21ad5637dadd29f0b931aa4e6adafdf079740bb55e989ebdfc",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "slowCrashExited2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "slowcrash",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "sleep 4; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:44:13Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:44:13Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.12",
      "podIPs": [
        {
          "ip": "10.88.194.12"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:44:09Z",
              "finishedAt": "2026-12-01T11:44:13Z",
              "containerID": "containerd://4ec8cfabcebd7b28d2fcd8fbfaef95e7087665652599967c743d5f6defe9b765"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:43:54Z",
              "finishedAt": "2026-12-01T11:43:58Z",
              "containerID": "containerd://8c2d3e1ef577577b1f991b3602dee64db3e704abff5b850fcb5b637d57cbcfe3"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://4ec8cfabcebd7b28d2fcd8fbfaef95e7087665652599967c743d5f6defe9b765",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "slowCrashRunning2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "slowcrash",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "sleep 4; exit 3"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:44:09Z"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:44:09Z"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.12",
      "podIPs": [
        {
          "ip": "10.88.194.12"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "running": {
              "startedAt": "2026-12-01T11:44:09Z"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 3,
              "reason": "Error",
              "startedAt": "2026-12-01T11:43:54Z",
              "finishedAt": "2026-12-01T11:43:58Z",
              "containerID": "containerd://8c2d3e1ef577577b1f991b3602dee64db3e704abff5b850fcb5b637d57cbcfe3"
            }
          },
          "ready": true,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://4ec8cfabcebd7b28d2fcd8fbfaef95e7087665652599967c743d5f6defe9b765",
          "started": true,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "exitZeroExited2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "exit0",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "true"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.14",
      "podIPs": [
        {
          "ip": "10.88.194.14"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "terminated": {
              "exitCode": 0,
              "reason": "Completed",
              "startedAt": "2026-12-01T11:44:01Z",
              "finishedAt": "2026-12-01T11:44:01Z",
              "containerID": "containerd://ceb93157b8d74171e5c1750e0407499f46f92b4386130a96e39508626c38c387"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 0,
              "reason": "Completed",
              "startedAt": "2026-12-01T11:43:50Z",
              "finishedAt": "2026-12-01T11:43:50Z",
              "containerID": "containerd://e180d2ba81658c98d954e0027c8c16d94424fc9cd52f13248c8ca99633778f65"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://ceb93157b8d74171e5c1750e0407499f46f92b4386130a96e39508626c38c387",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "startErrorBackOff": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "nocmd",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "/no/such/binary"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.11",
      "podIPs": [
        {
          "ip": "10.88.194.11"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "CrashLoopBackOff",
              "message": "back-off 20s restarting failed container=app pod=nocmd_cap(8f820c01-438e-4b74-9fde-7e667fa4002c)"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 128,
              "reason": "StartError",
              "message": "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/no/such/binary\": stat /no/such/binary: no such file or directory: unknown",
              "startedAt": "1970-01-01T00:00:00Z",
              "finishedAt": "2026-12-01T11:44:02Z",
              "containerID": "containerd://724d115e68df91bd8b21cae0137324dba5aa1f7a34dd3fc1d15c84ee945cd650"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://724d115e68df91bd8b21cae0137324dba5aa1f7a34dd3fc1d15c84ee945cd650",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "runContainerError": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "nocmd",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "/no/such/binary"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Running",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.11",
      "podIPs": [
        {
          "ip": "10.88.194.11"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "RunContainerError",
              "message": "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/no/such/binary\": stat /no/such/binary: no such file or directory: unknown"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 128,
              "reason": "StartError",
              "message": "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/no/such/binary\": stat /no/such/binary: no such file or directory: unknown",
              "startedAt": "1970-01-01T00:00:00Z",
              "finishedAt": "2026-12-01T11:44:25Z",
              "containerID": "containerd://ea890940042a5732105d74ba82b15212f8b72540b02db8f958a5e7b36ee6db44"
            }
          },
          "ready": false,
          "restartCount": 3,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://ea890940042a5732105d74ba82b15212f8b72540b02db8f958a5e7b36ee6db44",
          "started": false,
          "resources": {}
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "initCrashExited2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "initcrash",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "initContainers": [
        {
          "name": "migrate",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "exit 2"
          ]
        }
      ],
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sleep",
            "3600"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotInitialized",
          "message": "containers with incomplete status: [migrate]"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.10",
      "podIPs": [
        {
          "ip": "10.88.194.10"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "initContainerStatuses": [
        {
          "name": "migrate",
          "state": {
            "terminated": {
              "exitCode": 2,
              "reason": "Error",
              "startedAt": "2026-12-01T11:44:02Z",
              "finishedAt": "2026-12-01T11:44:02Z",
              "containerID": "containerd://4b7f6ac277942495e7b36587eeb665a0a2b0b38c4a49097464b2c9db36ab9e03"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 2,
              "reason": "Error",
              "startedAt": "2026-12-01T11:43:50Z",
              "finishedAt": "2026-12-01T11:43:50Z",
              "containerID": "containerd://f323e25a9c9b3a271fddf2103bab4c0aa40418e40b63ad61efb00e455593fefd"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://4b7f6ac277942495e7b36587eeb665a0a2b0b38c4a49097464b2c9db36ab9e03",
          "started": false,
          "resources": {}
        }
      ],
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "PodInitializing"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  },
  "initCrashBackOff2": {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
      "name": "initcrash",
      "namespace": "cap"
    },
    "spec": {
      "restartPolicy": "Always",
      "initContainers": [
        {
          "name": "migrate",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sh",
            "-c",
            "exit 2"
          ]
        }
      ],
      "containers": [
        {
          "name": "app",
          "image": "podlife.test/busybox:1",
          "imagePullPolicy": "Never",
          "command": [
            "sleep",
            "3600"
          ]
        }
      ],
      "nodeName": "node-1",
      "terminationGracePeriodSeconds": 1
    },
    "status": {
      "observedGeneration": 1,
      "phase": "Pending",
      "conditions": [
        {
          "type": "PodReadyToStartContainers",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:50Z"
        },
        {
          "type": "Initialized",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotInitialized",
          "message": "containers with incomplete status: [migrate]"
        },
        {
          "type": "Ready",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "ContainersReady",
          "observedGeneration": 1,
          "status": "False",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:48Z",
          "reason": "ContainersNotReady",
          "message": "containers with unready status: [app]"
        },
        {
          "type": "PodScheduled",
          "observedGeneration": 1,
          "status": "True",
          "lastProbeTime": null,
          "lastTransitionTime": "2026-12-01T11:43:47Z"
        }
      ],
      "hostIP": "10.88.194.1",
      "hostIPs": [
        {
          "ip": "10.88.194.1"
        }
      ],
      "podIP": "10.88.194.10",
      "podIPs": [
        {
          "ip": "10.88.194.10"
        }
      ],
      "startTime": "2026-12-01T11:43:48Z",
      "initContainerStatuses": [
        {
          "name": "migrate",
          "state": {
            "waiting": {
              "reason": "CrashLoopBackOff",
              "message": "back-off 20s restarting failed container=migrate pod=initcrash_cap(9f75df13-e07f-4fe6-9861-de8069288ab8)"
            }
          },
          "lastState": {
            "terminated": {
              "exitCode": 2,
              "reason": "Error",
              "startedAt": "2026-12-01T11:44:02Z",
              "finishedAt": "2026-12-01T11:44:02Z",
              "containerID": "containerd://4b7f6ac277942495e7b36587eeb665a0a2b0b38c4a49097464b2c9db36ab9e03"
            }
          },
          "ready": false,
          "restartCount": 2,
          "image": "podlife.test/busybox:1",
          "imageID": "sha256:6f99ea1cb4c6e46d3c2738040316861911f7d7f84f59f2fd34f44f0a9843e835",
          "containerID": "containerd://4b7f6ac277942495e7b36587eeb665a0a2b0b38c4a49097464b2c9db36ab9e03",
          "started": false,
          "resources": {}
        }
      ],
      "containerStatuses": [
        {
          "name": "app",
          "state": {
            "waiting": {
              "reason": "PodInitializing"
            }
          },
          "lastState": {},
          "ready": false,
          "restartCount": 0,
          "image": "podlife.test/busybox:1",
          "imageID": "",
          "started": false
        }
      ],
      "qosClass": "BestEffort"
    }
  }
} as unknown as Record<'creating' | 'crashExited0' | 'crashExited1' | 'crashBackOff1' | 'crashExited2' | 'crashBackOff2' | 'onFailureExited2' | 'onFailureBackOff2' | 'errImagePull' | 'imagePullBackOff' | 'errImageNeverPull' | 'probeFailing' | 'gateMissing' | 'succeeded' | 'slowCrashExited2' | 'slowCrashRunning2' | 'exitZeroExited2' | 'startErrorBackOff' | 'runContainerError' | 'initCrashExited2' | 'initCrashBackOff2', V1Pod>;

export const observedEvents = {
  "crashy": [
    {
      "type": "Normal",
      "reason": "Pulled",
      "message": "Container image \"podlife.test/busybox:1\" already present on machine and can be accessed by the pod",
      "count": 4,
      "firstTimestamp": "2026-12-01T11:40:52Z",
      "lastTimestamp": "2026-12-01T11:41:26Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "crashy",
        "fieldPath": "spec.containers{crashy}"
      }
    },
    {
      "type": "Normal",
      "reason": "Created",
      "message": "Container created",
      "count": 4,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:41:26Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "crashy",
        "fieldPath": "spec.containers{crashy}"
      }
    },
    {
      "type": "Normal",
      "reason": "Started",
      "message": "Container started",
      "count": 4,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:41:26Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "crashy",
        "fieldPath": "spec.containers{crashy}"
      }
    },
    {
      "type": "Warning",
      "reason": "BackOff",
      "message": "Back-off restarting failed container crashy in pod crashy_cap(715781cd-7cfe-4bef-823d-36be1e393e3b)",
      "count": 13,
      "firstTimestamp": "2026-12-01T11:40:55Z",
      "lastTimestamp": "2026-12-01T11:42:03Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "crashy",
        "fieldPath": "spec.containers{crashy}"
      }
    }
  ],
  "pull": [
    {
      "type": "Normal",
      "reason": "Pulling",
      "message": "Pulling image \"registry.example/podlife/missing:1\"",
      "count": 3,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:41:34Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "pull",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Warning",
      "reason": "Failed",
      "message": "Failed to pull image \"registry.example/podlife/missing:1\": failed to pull and unpack image \"registry.example/podlife/missing:1\": failed to resolve reference \"registry.example/podlife/missing:1\": failed to do request: Head \"http://127.0.0.1:9/v2/podlife/missing/manifests/1?ns=registry.example\": dial tcp 127.0.0.1:9: connect: connection refused",
      "count": 3,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:41:34Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "pull",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Warning",
      "reason": "Failed",
      "message": "Error: ErrImagePull",
      "count": 3,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:41:34Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "pull",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Normal",
      "reason": "BackOff",
      "message": "Back-off pulling image \"registry.example/podlife/missing:1\"",
      "count": 9,
      "firstTimestamp": "2026-12-01T11:40:54Z",
      "lastTimestamp": "2026-12-01T11:42:02Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "pull",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Warning",
      "reason": "Failed",
      "message": "Error: ImagePullBackOff",
      "count": 9,
      "firstTimestamp": "2026-12-01T11:40:54Z",
      "lastTimestamp": "2026-12-01T11:42:02Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "pull",
        "fieldPath": "spec.containers{app}"
      }
    }
  ],
  "probe": [
    {
      "type": "Normal",
      "reason": "Pulled",
      "message": "Container image \"podlife.test/busybox:1\" already present on machine and can be accessed by the pod",
      "count": 1,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:40:53Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "probe",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Normal",
      "reason": "Created",
      "message": "Container created",
      "count": 1,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:40:53Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "probe",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Normal",
      "reason": "Started",
      "message": "Container started",
      "count": 1,
      "firstTimestamp": "2026-12-01T11:40:53Z",
      "lastTimestamp": "2026-12-01T11:40:53Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "probe",
        "fieldPath": "spec.containers{app}"
      }
    },
    {
      "type": "Warning",
      "reason": "Unhealthy",
      "message": "Readiness probe failed: not warm\n",
      "count": 25,
      "firstTimestamp": "2026-12-01T11:40:54Z",
      "lastTimestamp": "2026-12-01T11:41:17Z",
      "involvedObject": {
        "kind": "Pod",
        "namespace": "cap",
        "name": "probe",
        "fieldPath": "spec.containers{app}"
      }
    }
  ]
} as unknown as Record<'crashy' | 'pull' | 'probe', PodEvent[]>;

