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
end
