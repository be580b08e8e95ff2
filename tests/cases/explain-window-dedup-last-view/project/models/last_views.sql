-- Each user's last view of every minute (of views at one time, the last to arrive).
SELECT user_id, page, viewed_at, window_end
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, user_id ORDER BY viewed_at DESC) AS rn
  FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
)
WHERE rn = 1
