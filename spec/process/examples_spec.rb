# frozen_string_literal: true

require "open3"
require "rbconfig"

RSpec.describe "The runnable examples" do
  def run_example(name)
    root = File.expand_path("../..", __dir__)
    output, status = Open3.capture2e(RbConfig.ruby, "-I", File.join(root, "lib"), File.join(root, "examples", name))
    expect(status).to be_success, output
    output
  end

  it "late_signups.rb files the plane signups under their own buckets and refuses the stale retry" do
    output = run_example("late_signups.rb")
    expect(output).to include("16:40    14:04     mobile  mateo     14:00-14:10")
    expect(output).to include("bucket 14:00-14:10 closed: 7 signups")
    expect(output).to include("16:49    14:05     web     quinn     refused: at or below the watermark 16:36")
  end

  it "reading_sessions.rb keeps view counts right across a merge" do
    output = run_example("reading_sessions.rb")
    expect(output).to include("view at 9:38 -> session 9:00-9:45")
    expect(output).to include("session 9:00-9:45 finished: 5 views")
    expect(output).to include("session 11:15-11:20 finished: 2 views")
  end

  it "partner_batches.rb hands over each partner's batches with running averages" do
    output = run_example("partner_batches.rb")
    expect(output).to include("Cobalt invoice issued 09:41 -> batch 09:12-09:50")
    expect(output).to include("ACME      batch 09:30-10:05 closed: 4 invoices (average per batch so far 3.5)")
    expect(output).to end_with("partners still held: 0\n")
  end

  it "surviving_restarts.rb ends where an uninterrupted run ends" do
    expect(run_example("surviving_restarts.rb")).to include("identical to the uninterrupted run")
  end

  it "page_views_per_session.rb counts and lists views per reading session, out-of-order views included" do
    output = run_example("page_views_per_session.rb")
    expect(output).to include("session finished: ana 09:00-10:05, 5 views: / > /pricing > /docs/install > /docs > /docs/grace")
    expect(output).to include("ben 10:15-10:42, 2 views: /blog/watermarks > /blog/late-data")
  end

  it "order_totals_per_minute.rb totals per minute with two minutes of grace and books the late order" do
    output = run_example("order_totals_per_minute.rb")
    expect(output).to include("minute 12:00 porto: 2 orders, 23.00")
    expect(output).to include("late: porto order at 12:00:40 (watermark 12:01:05), booked as a correction")
    expect(output).to end_with("1 order too late to count, 7.00 booked as corrections\n")
  end

  it "versioned_rates_join.rb prices each order at the rate in force when it was placed, late rates included" do
    output = run_example("versioned_rates_join.rb")
    expect(output).to include("rate  EUR 1.0820 from 09:20: late, filed in history until 09:30")
    expect(output).to include("order 3 EUR  50.00 placed 09:25: at 1.0820 = USD 54.10")
    expect(output).to include("order 6 EUR  40.00 placed 09:50: no rate: over an hour before the newest rate (11:00)")
    expect(output).to include("order 8 CHF  60.00 placed 09:35: at 1.1200 = USD 67.20")
    expect(output).to include("rate  EUR 1.0830 from 09:55: refused: over an hour before the newest rate (11:00)")
    expect(output).to include("  EUR: 1.0850 09:30-11:00, 1.0900 11:00-now\n  GBP: 1.2650 10:00-now\n")
    expect(output).to end_with("1 rate refused\n")
  end

  it "versioned_aggregate.rb totals the current prices per category and skips out-of-order updates" do
    output = run_example("versioned_aggregate.rb")
    expect(output).to match(/^tea-01 09:05  tea 4\.70, out of order \(until 09:10\): skipped +totals: tea 10\.80, mugs 12\.00$/)
    expect(output).to match(/^mug-01 09:18  removed, out of order \(until 09:20\): skipped +totals: tea 4\.80, mugs 11\.00, gifts 6\.50$/)
    expect(output).to match(/^tea-02 08:55  refused: over half an hour before 09:30 +totals: tea 0\.00, mugs 11\.00, gifts 6\.50$/)
    expect(output).to include("totals match the latest version of every product: true")
    expect(output).to end_with("1 update refused; 10 versions held, tombstones included\n")
  end

  it "batch_consumer.rb adds each poll in one call, reports the late view and skips the message without a time" do
    output = run_example("batch_consumer.rb")
    expect(output).to include("offset 6 skipped: no usable timestamp (ts nil)")
    expect(output).to include("minute 09:00 ana: 3 views (/ /pricing /docs)")
    expect(output).to include("late: ben at 09:00:45, after its minute closed (watermark 09:01:30)")
    expect(output).to end_with("the same as one add per message: true\n")
  end

  it "versioned_table_join.rb emits a label for each in-order update and none for an out-of-order one" do
    output = run_example("versioned_table_join.rb")
    expect(output).to include("addresses c1 09:10 Avenida da Liberdade 2, Lisbon -> nothing: out of order, 09:30's is newer")
    expect(output).to include("names     c1 09:40 Ana Lima Sousa                 -> label from 09:40: Ana Lima Sousa, Rua do Ouro 5, Lisbon")
    expect(output).to include("addresses c2 09:50 (removed)                      -> label withdrawn")
    expect(output).to include("addresses c1 09:20 (removed)                      -> nothing: out of order, 09:30's is newer")
    expect(output).to end_with("the same as joining the latest names and addresses: true\n")
  end
end
