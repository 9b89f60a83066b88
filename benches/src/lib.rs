//! Workload generators shared by the benches and the kpt comparison
//! script: realistic KRM manifests and package monorepos, generated rather
//! than committed.

/// A multi-document KRM manifest of about `target_bytes`: Deployments and
/// ConfigMaps with head and line comments, `# kpt-set:` setters, wide and
/// compact sequences, flow collections, block scalars and quoted strings.
pub fn manifest(target_bytes: usize) -> String {
    let mut out = String::with_capacity(target_bytes + 4096);
    let mut i = 0usize;
    while out.len() < target_bytes {
        out.push_str(&deployment(i));
        out.push_str("---\n");
        out.push_str(&config_map(i));
        out.push_str("---\n");
        i += 1;
    }
    out
}

/// One Deployment document.
pub fn deployment(i: usize) -> String {
    format!(
        r#"# Deployment {i}: the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i} # kpt-set: ${{name}}-{i}
  namespace: team-{ns}
  labels:
    app: web-{i}
    tier: frontend
  annotations:
    owner: "platform@example.com"
spec:
  replicas: {replicas} # kpt-set: ${{replicas}}
  selector:
    matchLabels:
      app: web-{i}
  template:
    metadata:
      labels:
        app: web-{i}
    spec:
      containers:
        - name: web
          image: "nginx:1.{minor}.0" # kpt-set: nginx:${{tag}}
          args: ["--port", "8080", '--verbose']
          ports:
            - containerPort: 8080
              protocol: TCP
          env:
            - name: MODE
              value: production
            - name: RETRIES
              value: "3"
          command:
            - /bin/sh
            - -c
            - |
              echo starting {i}
              exec nginx -g 'daemon off;'
"#,
        ns = i % 17,
        replicas = i % 5 + 1,
        minor = i % 25
    )
}

/// One ConfigMap document (compact sequences, folded scalar).
pub fn config_map(i: usize) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{i}
data:
  greeting: 'hello, world'
  count: "{i}"
  enabled: "true"
  description: >-
    A folded description for
    config map {i}.
  hosts:
  - a.example.com
  - b.example.com
  limits: {{cpu: 500m, memory: 128Mi}}
"#
    )
}
