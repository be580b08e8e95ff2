SELECT customer_id, SUM(amount) AS op
FROM source('orders')
GROUP BY customer_id
