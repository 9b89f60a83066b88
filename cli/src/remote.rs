//! The shared remote cache around a render (`--remote-cache`): the tiered
//! store over the local one, the uploads after a successful render, the
//! one warning, and what the summary line and `--explain` say about it.
//! `krmgraph cache stats` shows the configured remote and checks it
//! answers. Headers are never printed, nor the URL's password.

use std::sync::Arc;

use krmgraph_cache::{Store, Tiered};
use krmgraph_remote::{Client, Options};

use crate::args::RemoteArgs;
use crate::ui::Ui;

/// The client `args` configure, `None` without `--remote-cache`; `Err`
/// is the reason it cannot be used (the caller warns and goes on).
fn client(args: &RemoteArgs) -> Option<Result<Client, String>> {
    let url = args.remote_cache.as_deref().filter(|u| !u.is_empty())?;
    let mut headers = Vec::new();
    for header in &args.remote_header {
        match header.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                headers.push((name.trim().to_owned(), value.to_owned()));
            }
            _ => {
                return Some(Err(
                    "--remote-header wants NAME=VALUE (the value is not shown)".into(),
                ))
            }
        }
    }
    let options = Options {
        instance: args.remote_instance_name.clone(),
        headers,
        timeout: args.remote_timeout,
        tls_ca: args.remote_tls_ca.clone(),
    };
    Some(Client::open(url, &options))
}

/// The store a render uses: `local`, behind a tiered store when a remote
/// is configured (then also returned, for the uploads and the counts).
pub fn layer(
    args: &RemoteArgs,
    local: &Arc<krmgraph_cache::SledStore>,
    ui: &Ui,
) -> (Arc<dyn Store>, Option<Arc<Tiered>>) {
    let local_dyn: Arc<dyn Store> = local.clone();
    let remote = match client(args) {
        None => return (local_dyn, None),
        Some(Err(why)) => {
            ui.warn(&format!("rendering without the remote cache: {why}"));
            return (local_dyn, None);
        }
        Some(Ok(client)) => client.into_remote(),
    };
    let tiered = Tiered::new(
        local_dyn,
        remote,
        &krmgraph_render::cache::shared_kinds(),
        args.remote_upload,
    )
    .whole_kinds(&krmgraph_render::cache::whole_kinds());
    let tiered = Arc::new(tiered);
    (tiered.clone(), Some(tiered))
}

/// After a successful render: uploads what it recorded (bounded: each
/// request by `--remote-timeout`, and the first failure stops them);
/// then the run's one remote warning, if any.
pub fn finish(tiered: Option<&Arc<Tiered>>, ui: &Ui) {
    let Some(tiered) = tiered else {
        return;
    };
    tiered.upload_pending();
    warn(tiered, ui);
}

/// The run's remote warning, if there was a failure.
pub fn warn(tiered: &Tiered, ui: &Ui) {
    if let Some(message) = tiered.take_warning() {
        ui.warn(message.as_str());
    }
}

/// `; remote: ...` for the summary line, empty without a remote.
pub fn summary(tiered: Option<&Arc<Tiered>>) -> String {
    let Some(t) = tiered else {
        return String::new();
    };
    let s = t.stats();
    format!(
        "; remote: {} hit(s), {} miss(es), {} down, {} up ({} record(s) uploaded)",
        s.hits,
        s.misses,
        crate::cache::human_size(s.bytes_down),
        crate::cache::human_size(s.bytes_up),
        s.uploaded
    )
}

/// `--explain`'s line about the remote.
pub fn explain(tiered: Option<&Arc<Tiered>>) {
    if tiered.is_some() {
        eprintln!("[EXPLAIN] remote cache{}", summary(tiered));
    }
}

/// `krmgraph cache stats`: the configured remote and whether it answers.
pub fn print_stats(args: &RemoteArgs) {
    let Some(url) = args.remote_cache.as_deref().filter(|u| !u.is_empty()) else {
        return;
    };
    let shown = krmgraph_remote::redact(url);
    match client(args).map(|c| c.and_then(|c| c.check())) {
        Some(Ok(what)) => println!("remote:  {shown}: {what}"),
        Some(Err(why)) => println!("remote:  {shown}: does not answer: {why}"),
        None => {}
    }
}
