SELECT customer_id, SUM(amount) AS total_spend
FROM source('orders')
GROUP BY TUMBLE(customer_id, INTERVAL '1' HOUR), customer_id
