-- Orders per minute across both shops. The union's event time is the earlier of the two
-- shops' watermarks, so a minute closes only when both shops have moved past it.
SELECT window_start, window_end, COUNT(*) AS orders, SUM(amount) AS revenue
FROM TABLE(TUMBLE(TABLE ref('all_orders'), DESCRIPTOR(ordered_at), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
