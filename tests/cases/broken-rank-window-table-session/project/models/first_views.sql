SELECT user_id, page, viewed_at, window_start, window_end
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, user_id ORDER BY viewed_at) AS rn
  FROM TABLE(SESSION(TABLE source('page_views') PARTITION BY user_id, DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE))
)
WHERE rn = 1
