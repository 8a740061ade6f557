use super::*;
use crate::dashboard::fixtures;
use crate::dashboard::fixtures::Records;

fn row(target: &str, state: RowState) -> Row {
    Row {
        state,
        ..fixtures::row("acme/app", target)
    }
}

/// A fleet of `claims` claimed targets (one in five with a fresh heartbeat, one in five
/// with a dead one, the rest with none) spread over `batches` inferred batches.
fn fleet(claims: usize, batches: usize) -> DashboardModel {
    let mut r = Records::new();
    for i in 0..claims {
        let batch = format!("b{}", i % batches.max(1));
        let agent = format!("w{i}");
        r.claim("acme/app", &i.to_string(), &agent, Some(&batch));
        match i % 5 {
            0 => r.beat(
                &agent,
                "acme/app",
                &i.to_string(),
                Some(&batch),
                "working",
                1,
            ),
            1 => r.beat(
                &agent,
                "acme/app",
                &i.to_string(),
                Some(&batch),
                "working",
                90,
            ),
            _ => &mut r,
        };
    }
    r.model().1
}

#[test]
fn pages_clamp_to_the_data() {
    assert_eq!(page_count(0, 100), 1);
    assert_eq!(page_count(250, 100), 3);
    assert_eq!(page_range(250, 100, 3), 200..250);
    assert_eq!(page_range(250, 100, 9), 200..250);
    assert_eq!(page_range(0, 100, 1), 0..0);
    assert_eq!(page_number(Some("0")), 1);
    assert_eq!(page_number(Some("x")), 1);
    assert_eq!(page_number(Some("4")), 4);
}

#[test]
fn selection_counts_search_matches_by_state_and_filters_by_state() {
    let rows = vec![
        row("1", RowState::Dead),
        row("2", RowState::Running),
        row("12", RowState::Dead),
    ];
    let all = select_rows(&rows, "", None);
    assert_eq!(all.rows, vec![0, 1, 2]);
    assert_eq!(all.matched, 3);
    let dead = select_rows(&rows, "", RowState::parse("dead"));
    assert_eq!(dead.rows, vec![0, 2]);
    let pr = select_rows(&rows, "PR #12", None);
    assert_eq!(pr.rows, vec![2]);
    assert!(pr.by_state.contains(&(RowState::Dead, 1)));
    assert!(pr.by_state.contains(&(RowState::Running, 0)));
    assert_eq!(RowState::parse("bogus"), None);
}

#[test]
fn tier_filters_default_to_active() {
    assert_eq!(TierFilter::from_key(None), TierFilter::Active);
    assert_eq!(TierFilter::from_key(Some("archive")), TierFilter::Archive);
    assert_eq!(TierFilter::from_key(Some("nope")), TierFilter::Active);
}

#[test]
fn views_read_and_write_their_parameters() {
    let params = [
        ("view", "operator"),
        ("q", "PR #12"),
        ("state", "dead"),
        ("page", "3"),
    ];
    let get = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    let view = View::from_params(get).expect("a view");
    assert_eq!(
        view,
        View::Operator {
            q: "PR #12".into(),
            state: Some(RowState::Dead),
            page: 3
        }
    );
    assert_eq!(view.query(), "view=operator&q=PR%20%2312&state=dead&page=3");
    assert_eq!(
        View::from_params(|_| None),
        None,
        "no view: the whole model"
    );
    assert_eq!(View::from_params(|k| (k == "view").then_some("nope")), None);
    let batches = View::from_params(|k| match k {
        "view" => Some("batches"),
        "tier" => Some("all"),
        _ => None,
    })
    .expect("a view");
    assert_eq!(batches.query(), "view=batches&tier=all&page=1");
}

#[test]
fn the_operator_view_sends_one_page_of_the_searched_rows() {
    let model = fleet(250, 5);
    assert_eq!(model.rows.len(), 250);
    let view = |q: &str, state: Option<RowState>, page| View::Operator {
        q: q.into(),
        state,
        page,
    };
    let third = slice(&model, &view("", None, 3));
    let info = third.slice.as_ref().expect("slice info");
    assert_eq!((info.page, info.pages, info.first), (3, 3, 200));
    assert_eq!(third.rows.len(), 50);
    assert_eq!(third.rows[0].id, model.rows[200].id, "model order");
    assert_eq!(
        (info.selected, info.matched, info.rows_total),
        (250, 250, 250)
    );
    assert!(third.batches.is_empty() && third.machines.is_empty() && third.health.is_empty());
    assert_eq!(
        third.counts, model.counts,
        "headline counts describe the whole fleet"
    );
    // The search runs on the server, with the same semantics as before.
    let one = slice(&model, &view("#12", None, 1));
    assert_eq!(one.rows.len(), 1);
    assert_eq!(one.rows[0].target, "12");
    let by_state = &one.slice.as_ref().expect("info").rows_by_state;
    assert_eq!(by_state.iter().map(|(_, n)| n).sum::<usize>(), 1);
    // A state filter narrows the page but the chips count every match.
    let state = model.rows[0].state;
    let filtered = slice(&model, &view("", Some(state), 1));
    let f = filtered.slice.as_ref().expect("info");
    assert!(filtered.rows.iter().all(|r| r.state == state));
    assert_eq!(f.matched, 250);
    assert_eq!(
        f.selected,
        model.rows.iter().filter(|r| r.state == state).count()
    );
}

#[test]
fn the_batches_view_sends_one_page_of_a_tier_and_counts_every_tier() {
    let model = fleet(120, 60);
    assert_eq!(model.batches.len(), 60);
    let all = slice(
        &model,
        &View::Batches {
            tier: TierFilter::All,
            page: 2,
        },
    );
    let info = all.slice.as_ref().expect("info");
    assert_eq!(all.batches.len(), 10);
    assert_eq!((info.page, info.pages, info.selected), (2, 2, 60));
    assert_eq!(all.batches[0].id, model.batches[50].id);
    let counted: Vec<(String, usize)> = TierFilter::ALL
        .into_iter()
        .map(|f| {
            let n = model.batches.iter().filter(|b| f.admits(b)).count();
            (f.key().to_owned(), n)
        })
        .collect();
    assert_eq!(info.batches_by_tier, counted);
    assert!(all.rows.is_empty());
}

#[test]
fn the_overview_sends_the_first_few_of_each_list_and_their_rows() {
    let model = fleet(300, 10);
    let over = slice(&model, &View::Overview);
    let info = over.slice.as_ref().expect("info");
    assert!(
        model.attention.len() > OVERVIEW_CAP,
        "the fleet needs attention"
    );
    assert_eq!(over.attention.len(), OVERVIEW_CAP);
    assert_eq!(info.attention_total, model.attention.len());
    for a in &over.attention {
        assert!(
            over.rows.iter().any(|r| r.id == a.row_id),
            "the row of {} travels with it",
            a.row_id
        );
    }
    assert_eq!(
        info.active_work,
        model.rows.iter().filter(|r| r.is_active_work()).count()
    );
    assert_eq!(
        info.recoverable,
        model.rows.iter().filter(|r| r.is_recoverable()).count()
    );
    assert!(over.rows.len() <= 3 * OVERVIEW_CAP);
    assert!(
        over.rows.iter().filter(|r| r.is_active_work()).count()
            >= OVERVIEW_CAP.min(info.active_work)
    );
    assert!(over.batches.len() <= OVERVIEW_CAP);
    let full = serde_json::to_vec(&model).expect("json").len();
    let cut = serde_json::to_vec(&over).expect("json").len();
    assert!(
        cut * 5 < full,
        "the overview is a fraction of the model: {cut} of {full} bytes"
    );
}

#[test]
fn machines_and_health_are_bounded_per_group_with_totals() {
    let model = fleet(400, 4);
    let machines = slice(&model, &View::Machines);
    let info = machines.slice.as_ref().expect("info");
    assert_eq!(machines.machines.len(), model.machines.len());
    for (m, (id, n)) in machines.machines.iter().zip(&info.agents_by_machine) {
        assert_eq!(&m.id, id);
        let whole = model
            .machines
            .iter()
            .find(|x| &x.id == id)
            .expect("machine");
        assert_eq!(*n, whole.agents.len());
        assert_eq!(m.agents.len(), whole.agents.len().min(AGENTS_PER_MACHINE));
        for a in &m.agents {
            if let Some(work) = &a.work_row {
                assert!(machines.rows.iter().any(|r| &r.id == work), "{work}");
            }
        }
    }
    assert!(
        model
            .machines
            .iter()
            .any(|m| m.agents.len() > AGENTS_PER_MACHINE),
        "the fleet has a machine with more agents than one page shows"
    );
    let health = slice(&model, &View::Health);
    let h = health.slice.as_ref().expect("info");
    assert_eq!(
        h.health_by_title.iter().map(|(_, n)| n).sum::<usize>(),
        model.health.len()
    );
    for (title, n) in &h.health_by_title {
        let shown = health.health.iter().filter(|i| &i.title == title).count();
        assert_eq!(shown, (*n).min(HEALTH_PER_GROUP), "{title}");
    }
    assert!(
        model.health.len() > health.health.len(),
        "something was cut"
    );
}

#[test]
fn the_whole_model_serialises_without_a_slice_field() {
    let model = fleet(3, 1);
    let json = serde_json::to_value(&model).expect("json");
    assert!(json.get("slice").is_none());
    let cut = serde_json::to_value(slice(&model, &View::Summary)).expect("json");
    assert_eq!(cut["slice"]["view"], "summary");
    assert_eq!(cut["rows"], serde_json::json!([]));
}

#[test]
fn the_overview_carries_the_spend_with_the_costliest_few_and_every_day_other_views_none() {
    use crate::dashboard::model::SpendRow;
    use crate::dashboard::model::SpendView;
    let mut model = fleet(3, 1);
    let row = |key: String, cost: f64| SpendRow {
        key,
        spend: SpendView {
            runs: 1,
            cost_usd: cost,
            ..SpendView::default()
        },
    };
    model.spend.total.runs = 30;
    model.spend.workers = (0..30)
        .map(|i| row(format!("w{i}"), 30.0 - i as f64))
        .collect();
    model.spend.batches = model.spend.workers.clone();
    model.spend.days = (1..=20)
        .map(|d| row(format!("2026-01-{d:02}"), 1.0))
        .collect();
    let overview = slice(&model, &View::Overview);
    assert_eq!(overview.spend.total.runs, 30);
    assert_eq!(overview.spend.workers.len(), 10);
    assert_eq!(overview.spend.workers[0].key, "w0", "the costliest first");
    assert_eq!(overview.spend.batches.len(), 10);
    assert_eq!(overview.spend.days.len(), 20);
    assert!(slice(&model, &View::Machines).spend.is_empty());
}

#[test]
fn every_view_keeps_the_operators_holds() {
    use crate::coordinator::controls::Hold;
    use crate::coordinator::controls::HoldKind;
    let mut model = fleet(20, 2);
    model.holds = vec![Hold {
        kind: HoldKind::Pause,
        scope: "all".parse().expect("scope"),
        by: "alice".into(),
        at: "2026-06-13T11:00:00Z".into(),
        reason: None,
    }];
    for query in [
        "view=overview",
        "view=operator",
        "view=batches",
        "view=machines",
        "view=health",
    ] {
        let params: Vec<(&str, &str)> = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .collect();
        let get = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let view = View::from_params(get).expect("a view");
        assert_eq!(slice(&model, &view).holds, model.holds, "{query}");
    }
}
