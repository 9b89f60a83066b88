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

/// Shape of a generated monorepo: a tree of packages, `fanout` subpackages
/// per package, `depth` levels below the root, `resources` resources per
/// package (spread over a few files), each Kptfile running `functions`.
#[derive(Clone, Debug)]
pub struct MonorepoSpec {
    /// Subpackages per package.
    pub fanout: usize,
    /// Levels below the root (`fanout = 4, depth = 4` gives 341 packages).
    pub depth: usize,
    /// Resources per package.
    pub resources: usize,
    /// Pipeline entries of every Kptfile, as YAML list items
    /// (`- exec: cat`).
    pub functions: Vec<String>,
}

/// Writes a monorepo under `root`; returns the number of packages.
pub fn write_monorepo(root: &std::path::Path, spec: &MonorepoSpec) -> std::io::Result<usize> {
    write_package(root, "root", spec, spec.depth)
}

fn write_package(
    dir: &std::path::Path,
    name: &str,
    spec: &MonorepoSpec,
    levels_below: usize,
) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut kptfile = format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\ninfo:\n  description: generated package {name}\n");
    if !spec.functions.is_empty() {
        kptfile.push_str("pipeline:\n  mutators:\n");
        for f in &spec.functions {
            kptfile.push_str(&format!("    {f}\n"));
        }
    }
    std::fs::write(dir.join("Kptfile"), kptfile)?;
    // Resources spread over files of up to 5 documents each.
    let mut written = 0;
    let mut file_no = 0;
    while written < spec.resources {
        let mut text = String::new();
        for _ in 0..5.min(spec.resources - written) {
            let i = written;
            text.push_str(&if i % 2 == 0 {
                deployment(i)
            } else {
                config_map(i)
            });
            text.push_str("---\n");
            written += 1;
        }
        let text = text.trim_end_matches("---\n").to_string();
        std::fs::write(dir.join(format!("resources-{file_no}.yaml")), text)?;
        file_no += 1;
    }
    let mut packages = 1;
    if levels_below > 0 {
        for s in 0..spec.fanout {
            let sub = format!("{name}-{s}");
            packages += write_package(&dir.join(&sub), &sub, spec, levels_below - 1)?;
        }
    }
    Ok(packages)
}
