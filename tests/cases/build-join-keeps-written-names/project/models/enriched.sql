-- `c.customer_id` is the join's `customer_id0` inside; the model's column keeps the name
-- it was written with, as on Flink.
SELECT c.customer_id, c.name, COUNT(*) AS orders
FROM source('orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id
GROUP BY c.customer_id, c.name
