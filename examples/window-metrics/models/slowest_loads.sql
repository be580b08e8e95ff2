-- The two slowest page loads of the last minute, every 30 seconds: a window Top-N over the
-- views themselves (each view is in two windows), ranked once each window closes. Loads as
-- slow are ranked by time.
SELECT window_start, window_end, page, user_id, load_ms, place
FROM (
  SELECT *, ROW_NUMBER() OVER (
    PARTITION BY window_start, window_end
    ORDER BY load_ms DESC, viewed_at
  ) AS place
  FROM TABLE(HOP(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
)
WHERE place <= 2
