SELECT customer_id, SUM(amont) AS total_spend
FROM source('orders')
GROUP BY customer_id
